"""Payments sized by what the network holds (corpus/difficulty.py): shares of
each target's max flow at the start, as the Go tool computes it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from routesim_evolve.corpus.commands import corpus_command
from routesim_evolve.corpus.difficulty import (
    POOL_PER_PAYMENT,
    size_payments,
    starting_flows,
)
from routesim_evolve.corpus.generate import generate_corpus
from routesim_evolve.corpus.load import load_corpus
from routesim_evolve.corpus.schema import Payment
from routesim_evolve.corpus.settings import (
    DIFFICULTIES,
    ArenaSettings,
    FloatRange,
    GeneratorSettings,
    SenderSettings,
    SyntheticGraphSpec,
    default_arenas,
)

REPO = Path(__file__).parents[1]


def _arena(share: tuple[float, float], amount_sat: tuple[float, float]) -> ArenaSettings:
    return ArenaSettings(amount_share=FloatRange(min=share[0], max=share[1]),
                         amount_sat=FloatRange(min=amount_sat[0], max=amount_sat[1]))


def _pool(*flows_sat: int) -> tuple[list[Payment], list[int]]:
    pool = [Payment(target=f"02{i:064x}", amount_msat=1000) for i in range(len(flows_sat))]
    return pool, [f * 1000 for f in flows_sat]


def test_each_payment_is_a_share_of_its_targets_flow() -> None:
    pool, flows = _pool(*[1_000_000] * (3 * POOL_PER_PAYMENT))
    sized = size_payments(pool, flows, _arena((0.5, 0.6), (1, 10**9)), random.Random(1))
    assert len(sized) == 3
    assert all(500_000_000 <= p.amount_msat <= 600_000_000 for p in sized)
    assert all(p.amount_msat % 1000 == 0 for p in sized)
    assert [p.target for p in sized] == [p.target for p in pool[:3]]


def test_a_target_whose_flow_misses_the_range_is_passed_by() -> None:
    # The first target's flow is too small for the smallest amount, the
    # second's share too large for the largest: the third takes the payment.
    pool, flows = _pool(10, 100_000_000, 1_000_000, 1, 1, 1, 1, 1)
    sized = size_payments(pool, flows, _arena((0.5, 0.5), (10_000, 2_000_000)), random.Random(1))
    assert [p.target for p in sized] == [pool[2].target, pool[1].target]
    assert sized[0].amount_msat == 500_000_000
    # The pool ran out for the second: the largest flow passed by, brought
    # into the range.
    assert sized[1].amount_msat == 2_000_000_000


def test_sizing_needs_a_share_and_a_flow_per_entry() -> None:
    pool, flows = _pool(1, 2, 3, 4)
    with pytest.raises(ValueError):
        size_payments(pool, flows, ArenaSettings(), random.Random(1))
    with pytest.raises(ValueError):
        size_payments(pool, flows[:3], _arena((0.5, 0.6), (1, 10)), random.Random(1))


def _hard_settings() -> GeneratorSettings:
    arenas = {
        arena: settings.model_copy(update={
            "payments": settings.payments.model_copy(update={"min": 3, "max": 5}),
            "amount_share": DIFFICULTIES["hard"].amount_share,
        })
        for arena, settings in default_arenas().items()
    }
    return GeneratorSettings(
        seed=11, graphs=[SyntheticGraphSpec(nodes=150)],
        split_sizes={"train": 1, "val": 0, "test": 1}, arenas=arenas,
        sender=SenderSettings(min_capacity_sat=5_000_000),
    )


@pytest.fixture(scope="module")
def hard_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hard") / "corpus"
    generate_corpus(_hard_settings(), root)
    return root


def test_a_hard_corpus_sizes_payments_near_the_flow(hard_corpus: Path) -> None:
    corpus = load_corpus(hard_corpus)
    scenarios = [s for split in corpus.splits.values() for s in split]
    flows = starting_flows([s.path for s in scenarios])
    hard = DIFFICULTIES["hard"].amount_share
    shares = [p.amount_msat / f for s, fs in zip(scenarios, flows, strict=True)
              for p, f in zip(s.scenario.payments, fs, strict=True)]
    assert all(3 <= len(s.scenario.payments) <= 5 for s in scenarios)
    # Whole satoshis round each amount down: a share may fall just short.
    inside = [hard.min - 1e-3 <= x <= hard.max for x in shares]
    assert sum(inside) >= 0.9 * len(shares), shares
    assert corpus.manifest.settings.arenas["base"].amount_share == hard


def test_a_hard_corpus_is_made_again_byte_for_byte(hard_corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_corpus(_hard_settings(), again)
    for path in sorted(hard_corpus.rglob("*.json")):
        assert (again / path.relative_to(hard_corpus)).read_bytes() == path.read_bytes(), path


def test_cli_difficulty_sets_the_share_and_conflicts_with_amount_share() -> None:
    runner = CliRunner()
    printed = runner.invoke(corpus_command, ["generate", "--print-settings",
                                             "--difficulty", "medium"])
    assert printed.exit_code == 0, printed.output
    resolved = GeneratorSettings.model_validate_json(printed.output)
    assert {repr(a.amount_share) for a in resolved.arenas.values()} == {
        repr(DIFFICULTIES["medium"].amount_share)}
    both = runner.invoke(corpus_command, ["generate", "--print-settings", "--difficulty",
                                          "hard", "--amount-share", "0.1,0.2"])
    assert both.exit_code == 2 and "give one" in both.output
    outside = runner.invoke(corpus_command, ["generate", "--print-settings",
                                             "--amount-share", "0.5,1.5"])
    assert outside.exit_code == 2 and "not within (0, 1]" in outside.output
