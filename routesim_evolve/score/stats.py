"""Paired statistics for comparing two routers scenario by scenario.

Both routers run on the same scenarios with the same random draws (common
random numbers), so the right comparison is the per-scenario difference:
its mean with a bootstrap confidence interval, and the Wilcoxon signed-rank
test, which asks whether the differences lean one way without assuming they
are normal.

A scenario and its reseeded copies (`--revalidate`) share the sender, the
payments and the graph: they are one draw of the kind of scenario a result
should hold for, not several. Given each sample's cluster (its original
scenario), the bootstrap resamples whole clusters and the Wilcoxon test
ranks the clusters' mean differences.
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
    #: Independent scenarios among the n samples (each with its copies).
    clusters: int = 0
    #: The smallest true mean difference this sample would find with 80 %
    #: power at this confidence (minimum_detectable); None with fewer than
    #: two independent scenarios.
    detectable: float | None = None
    wins: int
    losses: int
    ties: int

    @property
    def significant(self) -> bool:
        """True when the confidence interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0


def mean_t_interval(diffs: Sequence[float], *,
                    confidence: float = 0.95) -> tuple[float, float, float]:
    """The mean and its Student t interval (of one difference, the whole
    range a difference of two scores in [0, 1] can take; of none, 0)."""
    values = np.asarray(diffs, dtype=float)
    if values.size == 0:
        return 0.0, 0.0, 0.0
    mean = float(values.mean())
    if values.size == 1:
        return mean, -1.0, 1.0
    half = float(stats.t.ppf(1 - (1 - confidence) / 2, values.size - 1)
                 * values.std(ddof=1) / np.sqrt(values.size))
    return mean, mean - half, mean + half


def bootstrap_mean_ci(
    diffs: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    clusters: Sequence[str] | None = None,
) -> tuple[float, float, float]:
    """Mean of diffs with a percentile bootstrap confidence interval,
    resampling whole clusters when given (one label per difference)."""
    values = np.asarray(diffs, dtype=float)
    if values.size == 0:
        raise ValueError("no differences to summarise")
    means = _resampled_means(values[None, :], clusters, resamples, seed)[0]
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(values.mean()), float(low), float(high)


def _resampled_means(
    series: np.ndarray, clusters: Sequence[str] | None, resamples: int, seed: int
) -> np.ndarray:
    """Bootstrap means of each row of series (samples in columns), one column
    per resample, drawing whole clusters (every sample its own without)."""
    if clusters is None:
        clusters = [str(i) for i in range(series.shape[1])]
    if len(clusters) != series.shape[1]:
        raise ValueError("every series needs one score per sample")
    sums, counts = _cluster_sums(series, clusters)
    picks = np.random.default_rng(seed).integers(0, counts.size, size=(resamples, counts.size))
    return sums[:, picks].sum(axis=2) / counts[picks].sum(axis=1)


def _cluster_sums(series: np.ndarray, clusters: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row of series summed within each cluster (in label order), and
    the clusters' sizes."""
    labels, index = np.unique(np.asarray(clusters), return_inverse=True)
    sums = np.stack([np.bincount(index, weights=row, minlength=labels.size) for row in series])
    return sums, np.bincount(index, minlength=labels.size)


def cluster_means(values: Sequence[float], clusters: Sequence[str]) -> list[float]:
    """The mean of values within each cluster, in label order."""
    sums, counts = _cluster_sums(np.asarray(values, dtype=float)[None, :], clusters)
    return list(sums[0] / counts)


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
    clusters: Sequence[str] | None = None,
) -> PairedComparison:
    """Compare two routers' per-scenario scores, paired by scenario; with
    clusters (each sample's original scenario), by whole clusters."""
    if len(scores_a) != len(scores_b):
        raise ValueError(f"{a} has {len(scores_a)} scores, {b} has {len(scores_b)}: not paired")
    xa, xb = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    diffs = xa - xb
    mean, low, high = bootstrap_mean_ci(diffs, confidence=confidence, seed=seed,
                                        clusters=clusters)
    ranked = diffs if clusters is None else cluster_means(diffs, clusters)
    return PairedComparison(
        detectable=minimum_detectable(ranked, confidence=confidence),
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
        p_value=wilcoxon_p(ranked),
        clusters=len(ranked),
        wins=int(np.sum(diffs > 0)),
        losses=int(np.sum(diffs < 0)),
        ties=int(np.sum(diffs == 0)),
    )


#: The power at which `minimum_detectable` finds a difference.
DETECTION_POWER = 0.8


def minimum_detectable(diffs: Sequence[float], *, confidence: float = 0.95) -> float | None:
    """The smallest true mean difference a paired comparison of these
    independent differences would find (its interval excluding 0) with
    DETECTION_POWER: (z of the confidence + z of the power) · sd / √k, a
    normal approximation over the k differences. None for k < 2."""
    values = np.asarray(diffs, dtype=float)
    if values.size < 2:
        return None
    z = stats.norm.ppf(1 - (1 - confidence) / 2) + stats.norm.ppf(DETECTION_POWER)
    return float(z * values.std(ddof=1) / np.sqrt(values.size))


def differ_upper_bound(differ: int, of: int, *, confidence: float = 0.95) -> float:
    """The exact (Clopper-Pearson) one-sided upper confidence bound on the
    share of paired outcomes that differ, when `differ` of `of` did. It bounds
    the difference of two success shares over the same payments, where a
    bootstrap of differences that are all 0 gives the empty interval [0, 0]."""
    if not 0 <= differ <= of or of == 0:
        raise ValueError(f"{differ} of {of} outcomes")
    if differ == of:
        return 1.0
    return float(stats.beta.ppf(confidence, differ + 1, of - differ))


def delivered_of_feasible(delivered: float, feasible: float) -> float | None:
    """The share of the feasible payments a router delivered; None when none
    was feasible."""
    return delivered / feasible if feasible > 0 else None


def headroom_captured(mine: float, better_lnd: float) -> float | None:
    """The share of lnd's distance to the feasible bound a router closes, on
    delivered of feasible: (mine − better lnd) / (1 − better lnd). It never
    exceeds 1, since no router delivers more than is feasible; None when lnd
    already delivers everything feasible (no gap)."""
    gap = 1 - better_lnd
    return (mine - better_lnd) / gap if gap > 1e-9 else None


def headroom_interval(
    mine: tuple[Sequence[float], Sequence[float]],
    lnd: Sequence[tuple[Sequence[float], Sequence[float]]],
    clusters: Sequence[str],
    *,
    confidence: float = 0.95,
    resamples: int = 4_000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the headroom captured
    (headroom_captured), where each router is given as (delivered, feasible),
    one count per sample, aligned, and `lnd` holds one such pair per lnd
    router (the better is taken in each resample).

    Whole clusters are resampled, not samples: a scenario and its reseeded
    copies share the sender, the payments and the graph, so together they are
    one draw of the kind of scenario the share should hold for. A resample
    where lnd delivers all that is feasible has no share and is left out;
    None when there are fewer than two clusters or most resamples have none.
    """
    rows = [list(series) for pair in (mine, *lnd) for series in pair]
    if not clusters or any(len(row) != len(clusters) for row in rows):
        raise ValueError("every series needs one count per sample")
    if len(set(clusters)) < 2:
        return None
    means = _resampled_means(np.asarray(rows, dtype=float), clusters, resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares_of_feasible = means[0::2] / means[1::2]  # a row per router
    mine_share, better_lnd = shares_of_feasible[0], shares_of_feasible[1:].max(axis=0)
    gap = 1 - better_lnd
    valid = np.isfinite(mine_share) & np.isfinite(better_lnd) & (gap > 1e-9)
    if valid.sum() < resamples / 2:
        return None
    shares = (mine_share[valid] - better_lnd[valid]) / gap[valid]
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(shares, [tail, 100 - tail])
    return float(low), float(high)
