"""Paired statistics for comparing two routers scenario by scenario.

Both routers run on the same scenarios with the same random draws (common
random numbers), so the right comparison is the per-scenario difference:
its mean with a bootstrap confidence interval, and the Wilcoxon signed-rank
test, which asks whether the differences lean one way without assuming they
are normal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel
from scipy import stats


class PairedComparison(BaseModel):
    """How router `a` did against router `b` on the same scenarios."""

    a: str
    b: str
    metric: str
    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float
    wins: int
    losses: int
    ties: int

    @property
    def significant(self) -> bool:
        """True when the confidence interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0


def bootstrap_mean_ci(
    diffs: Sequence[float], *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of diffs with a percentile bootstrap confidence interval."""
    values = np.asarray(diffs, dtype=float)
    if values.size == 0:
        raise ValueError("no differences to summarise")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, values.size, size=(resamples, values.size))
    means = values[picks].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(values.mean()), float(low), float(high)


def wilcoxon_p(diffs: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value; 1.0 when every difference is 0."""
    values = np.asarray(diffs, dtype=float)
    if values.size == 0 or not np.any(values):
        return 1.0
    return float(stats.wilcoxon(values, zero_method="wilcox").pvalue)


def compare_paired(
    a: str,
    b: str,
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    *,
    metric: str = "score",
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare two routers' per-scenario scores, paired by scenario."""
    if len(scores_a) != len(scores_b):
        raise ValueError(f"{a} has {len(scores_a)} scores, {b} has {len(scores_b)}: not paired")
    xa, xb = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    diffs = xa - xb
    mean, low, high = bootstrap_mean_ci(diffs, confidence=confidence, seed=seed)
    return PairedComparison(
        a=a,
        b=b,
        metric=metric,
        n=int(diffs.size),
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        mean_diff=mean,
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        p_value=wilcoxon_p(diffs),
        wins=int(np.sum(diffs > 0)),
        losses=int(np.sum(diffs < 0)),
        ties=int(np.sum(diffs == 0)),
    )
