"""The scenario and graph models refuse what the Go reader refuses, and say so
naming the file and the field (docs/scenario-format.md)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from routesim_evolve.corpus.load import (
    CorpusError,
    clear_graph_cache,
    field_path,
    load_graph,
    load_scenario,
)
from routesim_evolve.corpus.schema import parse_scid

EXAMPLES = Path(__file__).parents[1] / "docs" / "examples"
EXAMPLE_SCENARIOS = ["base", "drift", "atomic", "attribution"]

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(autouse=True)
def _fresh_graph_cache() -> Iterator[None]:
    clear_graph_cache()
    yield
    clear_graph_cache()


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text())


def write_case(
    tmp_path: Path, scenario_edit: Edit | None = None, graph_edit: Edit | None = None
) -> Path:
    """The base example and its graph, edited, written to tmp_path."""
    scenario, graph = example("base-example.json"), example("graph-small.json")
    if graph_edit:
        graph_edit(graph)
    if scenario_edit:
        scenario_edit(scenario)
    (tmp_path / "graph-small.json").write_text(json.dumps(graph))
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    return path


def load_error(path: Path) -> CorpusError:
    with pytest.raises(CorpusError) as caught:
        load_scenario(path)
    return caught.value


def assert_names(error: CorpusError, file: Path, field: str, words: str) -> None:
    message = str(error)
    assert message.startswith(f"{file}: {field}: "), message
    assert words in message, message
    assert (error.file, error.field) == (str(file), field)


def source_id() -> str:
    return str(example("base-example.json")["source"])


# ---------------------------------------------------------------------------
# The shared example files


@pytest.mark.parametrize("name", EXAMPLE_SCENARIOS)
def test_doc_examples_load(name: str) -> None:
    loaded = load_scenario(EXAMPLES / f"{name}-example.json")
    assert loaded.graph_path == EXAMPLES / "graph-small.json"
    assert loaded.arena == {"atomic": "atomic_mpp"}.get(name, name)
    assert len(loaded.scenario.payments) == 12
    assert len(loaded.graph.nodes) == 40


def test_graph_is_loaded_once_per_process() -> None:
    first = load_scenario(EXAMPLES / "base-example.json")
    second = load_scenario(EXAMPLES / "drift-example.json")
    assert first.graph is second.graph


def test_payment_limits_follow_the_defaults() -> None:
    sc = load_scenario(EXAMPLES / "base-example.json").scenario
    payment = sc.payments[0]
    assert payment.parts(sc.defaults) == 16
    assert payment.attempts(sc.defaults) == 40
    assert payment.fee_limit(sc.defaults) == 10_000 + payment.amount_msat // 100


# ---------------------------------------------------------------------------
# Graph rules: each names graph-small.json and the field


def _set(path: tuple[Any, ...], value: Any) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        target = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _duplicate_node(graph: dict[str, Any]) -> None:
    graph["nodes"][5]["id"] = graph["nodes"][4]["id"]


def _duplicate_scid(graph: dict[str, Any]) -> None:
    # "0700000x0x0" parses to the same id as "700000x0x0": Go compares numbers.
    graph["channels"][3]["scid"] = "0" + graph["channels"][0]["scid"]


def _self_channel(graph: dict[str, Any]) -> None:
    graph["channels"][2]["node2"] = graph["channels"][2]["node1"]


def _htlc_max(value_of: Callable[[dict[str, Any]], int]) -> Edit:
    def edit(graph: dict[str, Any]) -> None:
        channel = graph["channels"][1]
        channel["policy1"]["htlc_max_msat"] = value_of(channel)

    return edit


GRAPH_CASES = [
    pytest.param(_set(("nodes", 3, "id"), "02abc"), "nodes[3].id", "want 66 hex characters",
                 id="node-id-length"),
    pytest.param(_set(("nodes", 3, "id"), "zz" * 33), "nodes[3].id", "want 66 hex characters",
                 id="node-id-hex"),
    pytest.param(_duplicate_node, "nodes[5].id", "duplicate node", id="node-id-unique"),
    pytest.param(_set(("nodes",), []), "nodes", "graph has no nodes", id="no-nodes"),
    pytest.param(_set(("channels", 2, "scid"), "700000:1:0"), "channels[2].scid",
                 "want BLOCKxTXxOUTPUT", id="scid-syntax"),
    pytest.param(_set(("channels", 2, "scid"), "700000x1x70000"), "channels[2].scid",
                 "want BLOCKxTXxOUTPUT", id="scid-output-range"),
    pytest.param(_duplicate_scid, "channels[3].scid", "duplicate channel", id="scid-unique"),
    pytest.param(_set(("channels", 4, "node1"), "02" + "ab" * 32), "channels[4].node1",
                 'unknown node "02abab', id="channel-end-known"),
    pytest.param(_self_channel, "channels[2].node2", "to itself", id="self-channel"),
    pytest.param(_set(("channels", 6, "capacity_sat"), 0), "channels[6].capacity_sat",
                 "capacity must be positive, got 0", id="capacity-positive"),
    pytest.param(_htlc_max(lambda c: c["capacity_sat"] * 1000 + 1),
                 "channels[1].policy1.htlc_max_msat", "exceeds the capacity",
                 id="htlc-max-capacity"),
    pytest.param(_htlc_max(lambda c: 999), "channels[1].policy1.htlc_max_msat",
                 "is below htlc_min_msat 1000", id="htlc-max-min"),
    pytest.param(_set(("channels", 0, "policy2", "fee_rate"), 5), "channels[0].policy2.fee_rate",
                 'unknown field "fee_rate"', id="unknown-field"),
    pytest.param(_set(("channels", 0, "capacity_sat"), "5"), "channels[0].capacity_sat",
                 'want integer, got JSON string "5"', id="json-type"),
    pytest.param(_set(("channels", 0, "policy1", "fee_rate_ppm"), -1),
                 "channels[0].policy1.fee_rate_ppm", "want uint32, got JSON number -1",
                 id="uint-range"),
    pytest.param(_set(("format",), "routesim-graph/2"), "format",
                 'want "routesim-graph/1", got "routesim-graph/2"', id="graph-format"),
]


@pytest.mark.parametrize(("edit", "field", "words"), GRAPH_CASES)
def test_graph_rule(tmp_path: Path, edit: Edit, field: str, words: str) -> None:
    path = write_case(tmp_path, graph_edit=edit)
    assert_names(load_error(path), tmp_path / "graph-small.json", field, words)


def test_graph_loads_alone_and_names_missing_file(tmp_path: Path) -> None:
    assert len(load_graph(EXAMPLES / "graph-small.json").channels) == 65
    missing = tmp_path / "nowhere.json"
    with pytest.raises(CorpusError, match=f"^{missing}: "):
        load_graph(missing)


# ---------------------------------------------------------------------------
# Scenario rules: each names scenario.json and the field


def _no_source_channel(graph: dict[str, Any]) -> None:
    graph["channels"] = [
        c for c in graph["channels"] if source_id() not in (c["node1"], c["node2"])
    ]


def _source_channel_scid() -> str:
    graph = example("graph-small.json")
    return next(c["scid"] for c in graph["channels"] if source_id() in (c["node1"], c["node2"]))


def _local_balance(scid_of: Callable[[], str], msat: int) -> Edit:
    def edit(sc: dict[str, Any]) -> None:
        sc["local_balances_msat"] = {scid_of(): msat}

    return edit


def _pay_to_source(sc: dict[str, Any]) -> None:
    sc["payments"][2]["target"] = sc["source"]


SCENARIO_CASES = [
    pytest.param(_set(("format",), "routesim-scenario/0"), "format",
                 'want "routesim-scenario/1"', id="format"),
    pytest.param(_set(("name",), ""), "name", "missing scenario name", id="name"),
    pytest.param(_set(("arena",), "chaos"), "arena", 'unknown arena "chaos"', id="arena-known"),
    pytest.param(_set(("arena",), "drift"), "arena",
                 'arena "drift" needs traffic.events_per_hour > 0', id="arena-drift-switch"),
    pytest.param(_set(("arena",), "atomic_mpp"), "arena", "needs atomic_mpp: true",
                 id="arena-atomic-switch"),
    pytest.param(_set(("arena",), "attribution"), "arena", "needs a positive attribution rate",
                 id="arena-attribution-switch"),
    pytest.param(_set(("gossip", "stale_share"), 1.5), "gossip.stale_share",
                 "must lie in [0, 1], got 1.5", id="rate-range"),
    pytest.param(_set(("attribution", "stripped_rate"), -0.1), "attribution.stripped_rate",
                 "must lie in [0, 1], got -0.1", id="attribution-rate-range"),
    pytest.param(_set(("attribution",), {"stripped_rate": 0.5, "shift_before_rate": 0.4,
                                         "shift_after_rate": 0.2}),
                 "attribution", "rates add up to 1.1", id="attribution-sum"),
    pytest.param(_set(("liquidity", "bimodal_scale_sat"), 0), "liquidity.bimodal_scale_sat",
                 "must be positive, got 0", id="bimodal-scale"),
    pytest.param(_set(("gossip", "stale_fee_rate_factor"), 0.5), "gossip.stale_fee_rate_factor",
                 "must be at least 1, got 0.5", id="stale-factor"),
    pytest.param(_set(("clock", "attempt_latency_s"), -1), "clock.attempt_latency_s",
                 "must not be negative, got -1", id="clock-non-negative"),
    pytest.param(_set(("traffic",), {"events_per_hour": 10, "median_shift_sat": 0}),
                 "traffic.median_shift_sat", "must be positive when traffic is on",
                 id="traffic-median"),
    pytest.param(_set(("start_time",), "2026-01-01 00:00:00"), "start_time",
                 "want an RFC 3339 time", id="start-time-rfc3339"),
    pytest.param(_set(("defaults", "max_parts"), 0), "defaults.max_parts", "must be at least 1",
                 id="defaults-max-parts"),
    pytest.param(_set(("defaults", "cltv_limit_delta"), 40), "defaults.cltv_limit_delta",
                 "must exceed final_cltv_delta (40), got 40", id="defaults-cltv-limit"),
    pytest.param(_set(("source",), "02" + "0" * 10), "source", "want 66 hex characters",
                 id="source-hex"),
    pytest.param(_set(("payments", 3, "target"), "02" + "cd" * 32), "payments[3].target",
                 'unknown node "02cdcd', id="target-known"),
    pytest.param(_pay_to_source, "payments[2].target", "payment to the source itself",
                 id="target-not-source"),
    pytest.param(_set(("payments", 1, "amount_msat"), 0), "payments[1].amount_msat",
                 "must be positive", id="amount-positive"),
    pytest.param(_set(("payments", 1, "max_attempts"), -2), "payments[1].max_attempts",
                 "must not be negative", id="payment-attempts"),
    pytest.param(_set(("payments",), []), "payments", "scenario has no payments",
                 id="no-payments"),
    pytest.param(_local_balance(lambda: "700001x1x1", 1000), 'local_balances_msat["700001x1x1"]',
                 "not a channel of the source", id="local-balance-own-channel"),
    pytest.param(_local_balance(_source_channel_scid, 10**15),
                 f'local_balances_msat["{_source_channel_scid()}"]', "exceeds the capacity",
                 id="local-balance-capacity"),
    pytest.param(_set(("payments", 0, "amount"), 5), "payments[0].amount", 'unknown field "amount"',
                 id="unknown-field"),
    pytest.param(_set(("seed",), 1.5), "seed", "want integer, got JSON number 1.5",
                 id="json-type"),
]


@pytest.mark.parametrize(("edit", "field", "words"), SCENARIO_CASES)
def test_scenario_rule(tmp_path: Path, edit: Edit, field: str, words: str) -> None:
    path = write_case(tmp_path, scenario_edit=edit)
    assert_names(load_error(path), path, field, words)


def test_source_without_channel(tmp_path: Path) -> None:
    path = write_case(tmp_path, graph_edit=_no_source_channel)
    error = load_error(path)
    assert_names(error, path, "source", "has no channel in")
    assert str(tmp_path / "graph-small.json") in str(error)


def test_missing_required_field(tmp_path: Path) -> None:
    path = write_case(tmp_path, scenario_edit=lambda sc: sc.pop("start_time"))
    assert_names(load_error(path), path, "start_time", "missing field")


def test_sections_default_as_in_go(tmp_path: Path) -> None:
    """Go lets a section whose zero value is valid be absent; so do the models."""
    def strip(sc: dict[str, Any]) -> None:
        for key in ("gossip", "clock", "traffic", "attribution", "atomic_mpp", "seed"):
            sc.pop(key)

    loaded = load_scenario(write_case(tmp_path, scenario_edit=strip))
    assert loaded.scenario.gossip.stale_share == 0
    assert not loaded.scenario.attribution.enabled


def test_graph_path_is_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "graphs").mkdir()
    (tmp_path / "train").mkdir()
    (tmp_path / "graphs" / "g.json").write_text((EXAMPLES / "graph-small.json").read_text())
    body = copy.deepcopy(example("base-example.json"))
    body["graph"] = "../graphs/g.json"
    path = tmp_path / "train" / "s.json"
    path.write_text(json.dumps(body))
    assert load_scenario(path).graph_path == tmp_path / "graphs" / "g.json"
    body["graph"] = "../graphs/none.json"
    path.write_text(json.dumps(body))
    error = load_error(path)
    assert error.file == str(tmp_path / "graphs" / "none.json")


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{")
    assert str(load_error(path)).startswith(f"{path}: ")


def test_field_path_matches_go() -> None:
    assert field_path(("payments", 3, "target")) == "payments[3].target"
    assert field_path(("local_balances_msat", "700012x5x0")) == 'local_balances_msat["700012x5x0"]'
    assert field_path(()) == ""


def test_scid_encoding_matches_lnd() -> None:
    assert parse_scid("700123x45x1") == 700123 << 40 | 45 << 16 | 1
    with pytest.raises(ValueError, match="BLOCKxTXxOUTPUT"):
        parse_scid("16777216x0x0")
