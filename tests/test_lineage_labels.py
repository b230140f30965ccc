"""The lineage plot writes the ids that matter and none over another."""

from __future__ import annotations

from routesim_evolve.report.plots import lineage_labels
from routesim_evolve.runs.reader import CandidateRecord


def _c(cid: str, it: int, score: float, parent: str | None = None,
       verdict: str = "accepted") -> CandidateRecord:
    return CandidateRecord(id=cid, iteration=it, parent=parent, verdict=verdict,
                           val_score=score)


def test_the_best_its_ancestors_and_the_seed_first_and_no_two_on_one_spot():
    seed = _c("seed00", 0, 0.50, verdict="seed")
    mid = _c("mid000", 5, 0.60, parent="seed00")
    best = _c("best00", 10, 0.70, parent="mid000")
    # Ten knob moves scored exactly as the seed, at neighbouring iterations.
    twins = [_c(f"twin{k:02d}", 1 + k % 2, 0.50, parent="seed00") for k in range(10)]
    labels = lineage_labels([seed, mid, best, *twins])
    assert labels[:3] == [best, mid, seed]
    # The twins share two spots: at most one id is written on each.
    assert sum(t in labels for t in twins) <= 2
    spots = [(c.iteration, c.val_score) for c in labels]
    assert len(spots) == len(set(spots))
    assert lineage_labels([]) == []
