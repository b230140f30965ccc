"""The best is confirmed on reseeded val copies (evolve/confirm.py): the
CONTENDERS best by val are scored on copies with other draws; the val best
keeps its place unless another beats it, paired over both, clearly."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from repo_files import REPO

from routesim_evolve.corpus.examples import RESEED_MARK, load_examples
from routesim_evolve.evolve.confirm import CONTENDERS, confirm_best


class ScriptedScores:
    """An evaluator whose scores on the copies are set per candidate text:
    one value for every copy, or one per copy."""

    def __init__(self, scores: dict[str, float | list[float]]) -> None:
        self.scores = scores
        self.seen: list[tuple[str, str]] = []

    def evaluate_many(self, source, examples, *, workers=None):
        self.seen += [(source, e.name) for e in examples]
        got = self.scores[source]
        each = got if isinstance(got, list) else [got] * len(examples)
        return [SimpleNamespace(score=s) for s in each]


# The bundled corpus's val split: 8 scenarios, 16 pairs over val and copies.
VAL = REPO / "corpus"


def test_the_luckiest_on_val_gives_way_to_one_clearly_better_over_both() -> None:
    val = load_examples(VAL, "val")
    n = len(val)
    texts = ["seed", "lucky", "steady", "dull", "steady"]
    evaluator = ScriptedScores({"lucky": [0.60 + 0.01 * i for i in range(n)],
                                "steady": [0.88 + 0.01 * i for i in range(n)], "dull": 0.80})
    per_val = [[0.5] * n, [0.92 + 0.001 * i for i in range(n)], [0.89] * n, [0.85] * n,
               [0.89] * n]
    done = confirm_best(texts, per_val, val, evaluator)
    assert done.val_best == 1 and done.named == 2
    # Three distinct contenders, each on a reseeded copy of every val scenario.
    assert [c.index for c in done.contenders] == [1, 2, 3] and CONTENDERS == 3
    assert done.evaluations == 3 * n == len(evaluator.seen)
    assert all(RESEED_MARK in name for _, name in evaluator.seen)
    assert "did not hold" in done.note() and "#2 beats it over both" in done.note()


def test_a_hair_ahead_over_both_does_not_displace_the_val_best() -> None:
    val = load_examples(VAL, "val")
    n = len(val)
    # b is ahead over both by a little, and not on every scenario.
    evaluator = ScriptedScores({"a": [0.56, 0.55] * (n // 2), "b": [0.62, 0.52] * (n // 2)})
    done = confirm_best(["a", "b"], [[0.77] * n, [0.76] * n], val, evaluator)
    assert done.contenders[1].both > done.contenders[0].both
    assert done.named == done.val_best == 0
    assert done.note().startswith("best confirmed on reseeded val copies")


def test_nothing_to_confirm_with_one_candidate(tiny_corpus: Path) -> None:
    evaluator = ScriptedScores({})
    val = load_examples(tiny_corpus, "val")
    done = confirm_best(["seed"], [[0.5] * len(val)], val, evaluator)
    assert done.named == 0 and not done.contenders and not evaluator.seen
