"""The generator: calibrated synthetic topology, deterministic corpora that load,
a manifest that tells the truth, the CLI, and the bundled corpus."""

from __future__ import annotations

import json
import shutil
import statistics
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from routesim_evolve.corpus.commands import corpus_command
from routesim_evolve.corpus.generate import (
    GenerationError,
    derive_seed,
    generate_corpus,
    sender_candidates,
)
from routesim_evolve.corpus.graphtools import degrees, reachable_from
from routesim_evolve.corpus.load import CorpusError, clear_graph_cache, load_corpus
from routesim_evolve.corpus.manifest import Manifest
from routesim_evolve.corpus.schema import ARENAS, SPLITS, Graph
from routesim_evolve.corpus.settings import (
    ArenaSettings,
    FloatRange,
    GeneratorSettings,
    IntRange,
    SenderSettings,
    SyntheticGraphSpec,
    default_arenas,
)
from routesim_evolve.corpus.topology import MEDIAN_CAPACITY_SAT, synthetic_graph

REPO = Path(__file__).parents[1]
BUNDLED = REPO / "corpus"


def tiny_settings(seed: int = 5) -> GeneratorSettings:
    """Every arena, one scenario per split, small graphs: quick to make."""
    arenas = {
        arena: settings.model_copy(
            update={"payments": settings.payments.model_copy(update={"min": 3, "max": 5})}
        )
        for arena, settings in default_arenas().items()
    }
    return GeneratorSettings(
        seed=seed,
        graphs=[SyntheticGraphSpec(nodes=150), SyntheticGraphSpec(nodes=200)],
        split_sizes={"train": 2, "val": 1, "test": 1},
        arenas=arenas,
        sender=SenderSettings(min_capacity_sat=5_000_000),
    )


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.json"))}


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny") / "corpus"
    generate_corpus(tiny_settings(), root)
    return root


# ---------------------------------------------------------------------------
# Calibration of the synthetic topology


@pytest.fixture(scope="module")
def synthetic() -> Graph:
    return synthetic_graph(1500, seed=11, label="calibration")


def test_degree_mostly_one_or_two_with_a_tail_of_hubs(synthetic: Graph) -> None:
    degree = list(degrees(synthetic).values())
    low = sum(1 for d in degree if d <= 2) / len(degree)
    assert 0.45 <= low <= 0.75  # mainnet 2021: 0.60
    assert min(degree) >= 1
    assert statistics.median(degree) <= 3
    assert max(degree) >= 30 * statistics.median(degree)
    hubs = sorted(degree)[-15:]
    assert min(hubs) >= 20


def test_capacity_log_normal_around_the_mainnet_median(synthetic: Graph) -> None:
    capacities = [c.capacity_sat for c in synthetic.channels]
    median = statistics.median(capacities)
    assert MEDIAN_CAPACITY_SAT / 1.5 <= median <= MEDIAN_CAPACITY_SAT * 1.5
    # Log-normal: a wide spread on both sides of the median.
    assert min(capacities) < median / 10
    assert max(capacities) > median * 10


def test_policies_at_the_implementations_default_spikes(synthetic: Graph) -> None:
    policies = [p for c in synthetic.channels for p in (c.policy1, c.policy2) if p is not None]
    share = len(policies) / 100

    def share_of(values: list[int]) -> Counter[int]:
        return Counter({v: round(n / share, 1) for v, n in Counter(values).items()})

    cltv = share_of([p.cltv_delta for p in policies])
    assert all(cltv[d] >= 5 for d in (80, 144, 40, 34)), cltv
    base = share_of([p.fee_base_msat for p in policies])
    assert base[1000] + base[0] >= 80
    rate = share_of([p.fee_rate_ppm for p in policies])
    assert all(rate[r] >= 3 for r in (1, 10, 100, 1000)), rate.most_common(6)
    assert sum(1 for p in policies if 1 <= p.fee_rate_ppm <= 1000) / len(policies) > 0.95
    assert sum(1 for p in policies if p.htlc_min_msat == 1000) / len(policies) > 0.8
    near_capacity = sum(
        1 for c in synthetic.channels for p in (c.policy1, c.policy2)
        if p is not None and p.htlc_max_msat == c.capacity_sat * 990
    )
    absent = sum(1 for p in policies if p.htlc_max_msat is None)
    assert near_capacity / len(policies) > 0.4 and absent / len(policies) > 0.2
    disabled = sum(1 for p in policies if p.disabled) / len(policies)
    assert 0.005 < disabled < 0.1


def test_synthetic_graph_is_deterministic() -> None:
    assert synthetic_graph(200, 3, "x") == synthetic_graph(200, 3, "x")
    assert synthetic_graph(200, 3, "x") != synthetic_graph(200, 4, "x")


# ---------------------------------------------------------------------------
# A generated corpus


def test_tiny_corpus_loads_with_every_arena(tiny_corpus: Path) -> None:
    clear_graph_cache()
    corpus = load_corpus(tiny_corpus)
    for split, size in (("train", 2), ("val", 1), ("test", 1)):
        arenas = Counter(s.arena for s in corpus.splits[split])
        assert arenas == dict.fromkeys(ARENAS, size)
    for scenario in corpus.splits["train"]:
        assert scenario.scenario.graph.startswith("../graphs/")
        assert scenario.graph_path.parent.name == "graphs"
        assert 3 <= len(scenario.scenario.payments) <= 5
    assert sorted(p.name for p in (tiny_corpus / "graphs").iterdir()) == [
        "synthetic-01-n150.json", "synthetic-02-n200.json"
    ]


def test_same_seed_gives_byte_identical_files(tiny_corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_corpus(tiny_settings(), again)
    assert files_of(again) == files_of(tiny_corpus)
    other = tmp_path / "other"
    generate_corpus(tiny_settings(seed=6), other)
    assert files_of(other) != files_of(tiny_corpus)


def test_sender_is_well_connected_but_no_top_hub(tiny_corpus: Path) -> None:
    clear_graph_cache()
    corpus = load_corpus(tiny_corpus)
    for loaded in corpus.splits["train"]:
        graph, sc = loaded.graph, loaded.scenario
        degree = degrees(graph)
        top = sorted(degree.values(), reverse=True)[: max(1, round(0.03 * len(degree)))]
        assert degree[sc.source] >= 5
        assert degree[sc.source] <= min(top)
        assert sc.source in sender_candidates(graph, SenderSettings(min_capacity_sat=5_000_000))
        reachable = reachable_from(graph, sc.source)
        assert all(p.target in reachable for p in sc.payments)
        assert set(sc.local_balances_msat) == {
            c.scid for c in graph.channels if sc.source in (c.node1, c.node2)
        }


def test_manifest_states_what_the_files_hold(tiny_corpus: Path) -> None:
    manifest = Manifest.model_validate_json((tiny_corpus / "manifest.json").read_bytes())
    assert manifest.settings == tiny_settings()
    assert manifest.seed == 5
    assert [g.file for g in manifest.graphs] == [
        "graphs/synthetic-01-n150.json", "graphs/synthetic-02-n200.json"
    ]
    assert manifest.graphs[0].stats.nodes == 150
    assert manifest.graphs[0].source.kind == "synthetic"
    assert manifest.splits["val"].counts_per_arena == dict.fromkeys(ARENAS, 1)
    rates = manifest.arenas
    assert rates["attribution"].attribution.stripped_rate == 0.1
    assert rates["base"].attribution.stripped_rate == 0
    assert rates["drift"].drift.events_per_hour == 1200
    assert rates["base"].drift.events_per_hour == 0
    # Every arena's receivers hold shards, as real ones do; the atomic arena
    # adds traffic during the payment. Every arena plays the rules.
    assert all(r.atomic_mpp for r in rates.values())
    assert rates["atomic_mpp"].drift.events_per_hour == 3600
    assert all(r.rules is not None and r.rules.reserve_share == 0.01 for r in rates.values())
    assert rates["base"].max_parts == 16
    assert rates["base"].stale_gossip.share == 0.05
    corpus = load_corpus(tiny_corpus)
    amounts = [
        p.amount_msat / 1000
        for split in SPLITS for s in corpus.splits[split] if s.arena == "drift"
        for p in s.scenario.payments
    ]
    assert rates["drift"].amount_sat.min == min(amounts)
    assert rates["drift"].amount_sat.max == max(amounts)
    for entry in manifest.splits["train"].scenarios:
        assert (tiny_corpus / entry.file).exists()
    assert manifest.degraded_attribution() == rates["attribution"].attribution


def test_refuses_to_overwrite_unless_asked(tiny_corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tiny_corpus, copy)
    with pytest.raises(GenerationError, match="already holds a corpus"):
        generate_corpus(tiny_settings(), copy)
    (copy / "train" / "stray.json").write_text("{}")
    generate_corpus(tiny_settings(), copy, overwrite=True)
    assert files_of(copy) == files_of(tiny_corpus)


def test_corpus_check_finds_files_the_manifest_does_not_list(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tiny_corpus, copy)
    shutil.copy(copy / "val" / "base-001.json", copy / "val" / "base-009.json")
    with pytest.raises(CorpusError, match=r"splits\.val\.scenarios: .*val/base-009.json"):
        load_corpus(copy)


def test_impossible_sender_settings_say_why(tmp_path: Path) -> None:
    settings = tiny_settings().model_copy(update={"sender": SenderSettings(min_channels=500)})
    with pytest.raises(GenerationError, match="no node with ≥ 500 channels"):
        generate_corpus(settings, tmp_path / "none")


def test_derived_seeds_are_independent() -> None:
    assert derive_seed(1, "scenario", "val", "base", 1) != derive_seed(1, "scenario", "val",
                                                                     "base", 2)
    assert derive_seed(1, "a") == derive_seed(1, "a") < 2**63


# ---------------------------------------------------------------------------
# The command line


def test_cli_generate_and_validate(tmp_path: Path) -> None:
    out = tmp_path / "c"
    runner = CliRunner()
    result = runner.invoke(corpus_command, [
        "generate", "--out", str(out), "--seed", "9", "--nodes", "150",
        "--arenas", "base,attribution", "--split-sizes", "1,1,0", "--payments", "2,3",
        "--attribution", "0.2,0.1,0", "--sender-min-capacity-sat", "5000000",
    ])
    assert result.exit_code == 0, result.output
    manifest = Manifest.model_validate_json((out / "manifest.json").read_bytes())
    assert set(manifest.arenas) == {"base", "attribution"}
    assert manifest.arenas["attribution"].attribution.stripped_rate == 0.2
    assert manifest.arenas["attribution"].attribution.shift_after_rate == 0
    assert manifest.generator.command is not None
    result = runner.invoke(corpus_command, ["validate", str(out)])
    assert result.exit_code == 0 and "train: 2 scenarios" in result.output

    broken = out / "val" / "base-001.json"
    body = json.loads(broken.read_text())
    body["payments"][0]["target"] = "02" + "ab" * 32
    broken.write_text(json.dumps(body))
    result = runner.invoke(corpus_command, ["validate", str(out)])
    assert result.exit_code == 2
    assert f"{broken}: payments[0].target: unknown node" in result.output


def test_cli_settings_file_with_per_arena_override(tmp_path: Path) -> None:
    runner = CliRunner()
    printed = runner.invoke(corpus_command, ["generate", "--print-settings", "--nodes", "150"])
    assert printed.exit_code == 0, printed.output
    settings = json.loads(printed.output)
    settings["arenas"]["drift"]["events_per_hour"] = 50
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    result = runner.invoke(corpus_command, [
        "generate", "--settings", str(path), "--max-parts", "4", "--print-settings",
    ])
    assert result.exit_code == 0, result.output
    resolved = GeneratorSettings.model_validate_json(result.output)
    assert resolved.arenas["drift"].events_per_hour == 50
    assert resolved.arenas["base"].events_per_hour == 0
    assert {a.max_parts for a in resolved.arenas.values()} == {4}
    assert [g.model_dump() for g in resolved.graphs] == [{"kind": "synthetic", "nodes": 150}]


def test_cli_help_documents_every_option() -> None:
    result = CliRunner().invoke(corpus_command, ["generate", "--help"])
    assert result.exit_code == 0
    generate = corpus_command.commands["generate"]
    for option in generate.params:
        assert option.help, f"{option.name} has no help"


# ---------------------------------------------------------------------------
# The bundled corpus


def test_bundled_corpus_loads_and_covers_every_arena() -> None:
    corpus = load_corpus(BUNDLED)
    # A larger test split, so that the held-out table can separate routers.
    per_arena = {"train": 2, "val": 2, "test": 8}
    for split in SPLITS:
        assert Counter(s.arena for s in corpus.splits[split]) == dict.fromkeys(
            ARENAS, per_arena[split])
    assert corpus.manifest.degraded_attribution() is not None
    assert all(g.source.kind == "synthetic" for g in corpus.manifest.graphs)


def test_cli_defaults_are_the_models_own() -> None:
    """Without options the command resolves to GeneratorSettings() itself: no
    default is written twice, and a changed model default reaches the CLI."""
    printed = CliRunner().invoke(corpus_command, ["generate", "--print-settings"])
    assert printed.exit_code == 0, printed.output
    assert GeneratorSettings.model_validate_json(printed.output) == GeneratorSettings()
    shown = CliRunner().invoke(corpus_command, ["generate", "--help"], terminal_width=400).output
    assert f"[default: {ArenaSettings().max_attempts}]" in shown
    assert f"[default: {SenderSettings().min_channels}]" in shown


@pytest.mark.parametrize("option,value,field,expected", [
    ("--max-attempts", "7", "max_attempts", 7),
    ("--payments", "3,4", "payments", IntRange(min=3, max=4)),
    ("--amount-sat", "5000,6000", "amount_sat", FloatRange(min=5000, max=6000)),
    ("--local-balance-share", "none", "local_balance_share", None),
    ("--start-time", "2026-02-01T00:00:00Z", "start_time", "2026-02-01T00:00:00Z"),
])
def test_cli_arena_options_reach_every_arena(option: str, value: str, field: str,
                                             expected: object) -> None:
    printed = CliRunner().invoke(corpus_command, ["generate", "--print-settings", option, value])
    assert printed.exit_code == 0, printed.output
    resolved = GeneratorSettings.model_validate_json(printed.output)
    assert {repr(getattr(a, field)) for a in resolved.arenas.values()} == {repr(expected)}
