"""Importers of real gossip dumps: lnd's `lncli describegraph` and Core
Lightning's `listchannels` (hand-written fixtures under tests/data/), and the
real mainnet dump in ../shared/data when it is there."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from routesim_evolve.corpus.generate import generate_corpus, graph_json
from routesim_evolve.corpus.graphtools import Reach
from routesim_evolve.corpus.importers import (
    DumpFormatError,
    as_int,
    detect_format,
    import_graph_file,
    import_listchannels,
    import_lncli,
)
from routesim_evolve.corpus.load import clear_graph_cache, load_corpus, load_graph
from routesim_evolve.corpus.schema import Channel, Graph
from routesim_evolve.corpus.settings import (
    GeneratorSettings,
    ImportedGraphSpec,
    SenderSettings,
    default_arenas,
)

DATA = Path(__file__).parent / "data"
LNCLI = DATA / "lncli-describegraph.json"
LISTCHANNELS = DATA / "cln-listchannels.json"
SHARED_DATA = Path(__file__).parents[1] / ".." / "shared" / "data"
REAL_DUMP = SHARED_DATA / "ln-listchannels-2021-04-16.json.gz"



def fixture_id(name: str) -> str:
    """How the fixtures' node ids were made."""
    return "02" + hashlib.sha256(name.encode()).hexdigest()


ALICE, BOB, CAROL, DAVE = (fixture_id(n) for n in ("alice", "bob", "carol", "dave"))


def by_scid(graph: Graph) -> dict[str, Channel]:
    return {c.scid: c for c in graph.channels}


def test_numbers_in_every_spelling() -> None:
    assert as_int("1000") == 1000
    assert as_int("123msat") == 123
    assert as_int(7) == 7
    assert as_int(None, default=5) == 5


def test_detects_the_format() -> None:
    assert detect_format(json.loads(LNCLI.read_text())) == "lncli"
    assert detect_format(json.loads(LISTCHANNELS.read_text())) == "listchannels"
    with pytest.raises(DumpFormatError):
        detect_format({"peers": []})


def test_lncli_describegraph() -> None:
    graph, report = import_lncli(json.loads(LNCLI.read_text()))
    channels = by_scid(graph)
    assert sorted(channels) == ["700000x1x0", "700001x2x1", "700002x3x0", "700003x4x0"]
    assert (report.dropped_unknown_end, report.dropped_self_channel,
            report.dropped_no_capacity) == (1, 1, 1)
    assert len(graph.nodes) == 5  # erin stays a node: lncli lists her
    alice = next(n for n in graph.nodes if n.id == ALICE)
    assert alice.alias == "alice"
    assert alice.features == [0, 5, 7, 9, 12, 14, 17]

    ab = channels["700000x1x0"]
    assert ab.capacity_sat == 1_000_000
    alice_policy = ab.policy_from(ALICE)
    assert alice_policy is not None
    assert (alice_policy.cltv_delta, alice_policy.fee_base_msat, alice_policy.fee_rate_ppm,
            alice_policy.htlc_min_msat, alice_policy.htlc_max_msat) == (40, 1000, 1, 1000,
                                                                        990_000_000)
    bob_policy = ab.policy_from(BOB)
    assert bob_policy is not None and bob_policy.cltv_delta == 144
    # lnd 0.18+'s inbound fee: a discount bob gives HTLCs from alice.
    assert (bob_policy.inbound_fee_base_msat, bob_policy.inbound_fee_rate_ppm) == (-500, -50)
    assert (alice_policy.inbound_fee_base_msat, alice_policy.inbound_fee_rate_ppm) == (0, 0)

    assert channels["700001x2x1"].policy_from(CAROL) is None
    cd = channels["700002x3x0"]
    carol_policy, dave_policy = cd.policy_from(CAROL), cd.policy_from(DAVE)
    assert carol_policy is not None and carol_policy.htlc_max_msat == 200_000_000  # clamped
    assert dave_policy is not None and dave_policy.disabled
    assert report.htlc_max_clamped == 1
    da = channels["700003x4x0"]
    assert da.node1 < da.node2  # lnd's order
    dave_to_alice = da.policy_from(DAVE)
    assert dave_to_alice is not None and dave_to_alice.htlc_max_msat is None


def test_listchannels_pairs_directions_by_scid() -> None:
    graph, report = import_listchannels(json.loads(LISTCHANNELS.read_text()))
    channels = by_scid(graph)
    assert sorted(channels) == [
        "700000x1x0", "700001x2x1", "700002x3x0", "700003x4x0", "700007x8x0"
    ]
    assert report.dropped_self_channel == 1
    ab = channels["700000x1x0"]
    a_policy, b_policy = ab.policy_from(ALICE), ab.policy_from(BOB)
    assert a_policy is not None and (a_policy.fee_rate_ppm, a_policy.cltv_delta) == (1, 40)
    assert b_policy is not None and (b_policy.fee_rate_ppm, b_policy.htlc_min_msat) == (100, 1)

    bc = channels["700001x2x1"]
    assert bc.policy_from(BOB) is not None and bc.policy_from(CAROL) is None
    cd = channels["700002x3x0"]
    dave_policy = cd.policy_from(DAVE)
    assert dave_policy is not None and dave_policy.disabled  # active: false
    carol_policy = cd.policy_from(CAROL)
    assert carol_policy is not None and carol_policy.htlc_max_msat == 200_000_000
    later = channels["700003x4x0"].policy_from(DAVE)
    assert later is not None and (later.fee_base_msat, later.fee_rate_ppm) == (2000, 50)
    assert report.duplicate_directions == 1


def test_largest_component_only_by_default(tmp_path: Path) -> None:
    compressed = tmp_path / "dump.json.gz"
    compressed.write_bytes(gzip.compress(LISTCHANNELS.read_bytes()))
    whole = import_graph_file(compressed, keep_largest_component=False)
    largest = import_graph_file(compressed)
    assert len(whole.graph.channels) == 5
    assert "700007x8x0" not in by_scid(largest.graph)
    assert len(largest.graph.nodes) == 4
    assert largest.report.dropped_outside_largest_component == 1
    assert largest.format == "listchannels"
    assert len(largest.sha256) == 64


def test_imported_graph_round_trips_through_a_graph_file(tmp_path: Path) -> None:
    imported = import_graph_file(LNCLI).graph
    path = tmp_path / "g.json"
    path.write_text(graph_json(imported))
    clear_graph_cache()
    assert load_graph(path) == imported


def _real_dump_or_skip() -> Path:
    if not REAL_DUMP.exists():
        pytest.skip(
            f"real mainnet dump absent at {REAL_DUMP.resolve()} (see shared/data/README.md)"
        )
    return REAL_DUMP


@pytest.mark.realdata
def test_real_listchannels_dump() -> None:
    imported = import_graph_file(_real_dump_or_skip(), keep_largest_component=False)
    graph = imported.graph
    assert imported.format == "listchannels"
    assert len(graph.nodes) == pytest.approx(8827, rel=0.02)
    assert len(graph.channels) == pytest.approx(37454, rel=0.02)
    assert imported.sha256 == "c5990d097f9a577c3173a010d5c04839d19d5273df96824fd09062e9d57ba619"


@pytest.mark.realdata
def test_corpus_from_the_real_graph(tmp_path: Path) -> None:
    """A corpus on the imported mainnet graph is written to tmp (never the repo)."""
    dump = _real_dump_or_skip()
    arenas = default_arenas()
    settings = GeneratorSettings(
        seed=3,
        graphs=[ImportedGraphSpec(file=str(dump))],
        split_sizes={"train": 1, "val": 0, "test": 0},
        arenas={"base": arenas["base"], "attribution": arenas["attribution"]},
        sender=SenderSettings(min_channels=10),
    )
    manifest = generate_corpus(settings, tmp_path)
    source = manifest.graphs[0].source
    assert source.kind == "imported" and source.largest_component
    assert manifest.graphs[0].stats.nodes > 8000
    corpus = load_corpus(tmp_path)
    assert [s.arena for s in corpus.splits["train"]] == ["attribution", "base"]


def write_pruned_dump(dump: Path, out: Path, share: float = 1 / 3, seed: int = 5) -> Path:
    """The real dump with `share` of its directions' policies removed, as a
    current snapshot has them (a third of directions without a policy)."""
    import gzip
    import json
    import random

    rng = random.Random(seed)
    data = json.loads(gzip.decompress(dump.read_bytes()))
    data["channels"] = [c for c in data["channels"] if rng.random() >= share]
    out.write_text(json.dumps(data))
    return out


@pytest.mark.realdata
def test_corpus_from_a_real_graph_with_a_third_of_policies_gone(tmp_path: Path) -> None:
    """The reach threshold follows what the graph allows: with a third of
    its directions' policies removed, senders are still found, every target
    is reachable, and every sender's own channels carry a policy."""
    dump = write_pruned_dump(_real_dump_or_skip(), tmp_path / "pruned.json")
    arenas = default_arenas()
    settings = GeneratorSettings(
        seed=5,
        graphs=[ImportedGraphSpec(file=str(dump))],
        split_sizes={"train": 4, "val": 0, "test": 0},
        arenas={"base": arenas["base"]},
    )
    generate_corpus(settings, tmp_path / "corpus")
    corpus = load_corpus(tmp_path / "corpus")  # validates sender_policies, too
    assert len(corpus.splits["train"]) == 4
    for loaded in corpus.splits["train"]:
        reach = Reach(loaded.graph)
        reached = reach.from_sender(loaded.scenario.source)
        assert len(reached) >= 0.5 * len(reach.core_reach)
        assert all(p.target in reached for p in loaded.scenario.payments)
