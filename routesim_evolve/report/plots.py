"""The report's figures, drawn with matplotlib's Agg canvas (no display,
no pyplot state) and returned as PNG data URIs to embed in the page."""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from routesim_evolve.report.heldout import ArenaRow
from routesim_evolve.report.sizes import SizeBucket
from routesim_evolve.runs.reader import AxisPoint, CandidateRecord, ValPoint
from routesim_evolve.score.stats import PairedComparison
from routesim_evolve.simulate.routers import reference_colours

DPI = 100
#: The routers every page shows, each in its own colour on every page.
FIXED_COLOURS = {"best": "#1f77b4", "seed": "#ff7f0e", **reference_colours()}
#: Colours for the other routers (candidates by name), picked by the name.
PALETTE = ("#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939",
           "#8c6d31")


def colours(routers: Sequence[str]) -> dict[str, str]:
    """One colour per router, the same on every page and figure: fixed for
    the references, the seed and the best, by a hash of the name for the
    rest (distinct among themselves while the palette lasts)."""
    out = {r: FIXED_COLOURS[r] for r in routers if r in FIXED_COLOURS}
    free = list(PALETTE)
    for router in sorted(r for r in routers if r not in FIXED_COLOURS):
        start = int(hashlib.sha256(router.encode()).hexdigest(), 16) % len(PALETTE)
        pick = next((PALETTE[(start + k) % len(PALETTE)] for k in range(len(PALETTE))
                     if PALETTE[(start + k) % len(PALETTE)] in free), PALETTE[start])
        out[router] = pick
        if pick in free:
            free.remove(pick)
    return out


def to_data_uri(fig: Figure) -> str:
    """The figure as a base64 PNG data URI."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def best_val_curve(points: Sequence[ValPoint]) -> str:
    """Every val score against the metric calls spent, and the best so far."""
    fig = Figure(figsize=(7, 3.2))
    ax = fig.add_subplot()
    calls = [p.metric_calls for p in points]
    ax.step(calls, [p.best for p in points], where="post", label="best val so far")
    ax.scatter(calls, [p.score for p in points], s=18, color="#ff7f0e", zorder=3,
               label="candidate val score")
    ax.set_xlabel("metric calls (candidate × scenario evaluations)")
    ax.set_ylabel("val score")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    return to_data_uri(fig)


#: Labels closer than this share of the axes' spans would overlap.
_LABEL_ROOM = 0.06


def lineage_labels(scored: Sequence[CandidateRecord]) -> list[CandidateRecord]:
    """The candidates whose ids the lineage plot writes: the best, the seed
    and the best's ancestors first, then the others by val score, each only
    where no label already written is near (many candidates share a score,
    and their ids were written over one another; the table lists all)."""
    if not scored:
        return []
    by_id = {c.id: c for c in scored}
    best = max(scored, key=lambda c: c.val_score or 0.0)
    first = [best]
    while (parent := by_id.get(first[-1].parent or "")) is not None and parent not in first:
        first.append(parent)
    first += [c for c in scored if c.verdict == "seed" and c not in first]
    rest = sorted((c for c in scored if c not in first), key=lambda c: -(c.val_score or 0.0))
    xs = [c.iteration or 0 for c in scored]
    ys = [c.val_score or 0.0 for c in scored]
    dx, dy = (max(xs) - min(xs)) or 1, (max(ys) - min(ys)) or 1
    placed: list[CandidateRecord] = []
    for c in [*first, *rest]:
        if all(abs((c.iteration or 0) - (p.iteration or 0)) / dx > _LABEL_ROOM
               or abs((c.val_score or 0.0) - (p.val_score or 0.0)) / dy > _LABEL_ROOM
               for p in placed):
            placed.append(c)
    return placed


def lineage_plot(candidates: Sequence[CandidateRecord]) -> str:
    """Candidates scored on val by iteration, each joined to its parent."""
    fig = Figure(figsize=(7, 3.2))
    ax = fig.add_subplot()
    scored = {c.id: c for c in candidates if c.val_score is not None}
    for c in scored.values():
        parent = scored.get(c.parent or "")
        if parent is not None:
            ax.plot([parent.iteration or 0, c.iteration or 0],
                    [parent.val_score, c.val_score], color="#999999", lw=1, zorder=1)
    ax.scatter([c.iteration or 0 for c in scored.values()],
               [c.val_score for c in scored.values()], s=30, zorder=2)
    for c in lineage_labels(list(scored.values())):
        ax.annotate(c.id[:6], (c.iteration or 0, c.val_score or 0.0), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("iteration (0: the seed)")
    ax.set_ylabel("val score")
    ax.grid(alpha=0.3)
    return to_data_uri(fig)


def pareto_plot(points: Sequence[AxisPoint]) -> str:
    """Success against each secondary axis; the non-dominated candidates filled."""
    pairs = (("success", "retry_efficiency"), ("success", "time_efficiency"),
             ("success", "fee_efficiency"))
    fig = Figure(figsize=(10, 3.3))
    for i, (x, y) in enumerate(pairs, 1):
        ax = fig.add_subplot(1, 3, i)
        for frontier, style in ((False, {"facecolors": "none", "edgecolors": "#7f7f7f"}),
                                (True, {"color": "#d62728"})):
            chosen = [p for p in points if p.on_frontier == frontier]
            ax.scatter([getattr(p, x) for p in chosen], [getattr(p, y) for p in chosen], s=30,
                       label="on the frontier" if frontier else "dominated", **style)
        ax.set_xlabel(x.replace("_", " "))
        ax.set_ylabel(y.replace("_", " "))
        ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="upper center", ncols=2,
               fontsize=8)
    return to_data_uri(fig)


def arena_bars(rows: Sequence[ArenaRow], routers: Sequence[str]) -> str:
    """Mean score per arena, one bar per router."""
    arenas = list(dict.fromkeys(r.arena for r in rows))
    colour = colours(routers)
    width = 0.8 / max(len(routers), 1)
    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot()
    for i, router in enumerate(routers):
        mine = {r.arena: r.score for r in rows if r.router == router}
        xs = [a + i * width for a, arena in enumerate(arenas) if arena in mine]
        ax.bar(xs, [mine[arena] for arena in arenas if arena in mine], width,
               label=router, color=colour[router])
    ax.set_xticks([a + 0.4 - width / 2 for a in range(len(arenas))], arenas)
    ax.set_ylabel("mean score")
    low = min((r.score for r in rows), default=0.0)
    ax.set_ylim(max(0.0, low - 0.1), 1.0)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(ncols=min(len(routers), 5), fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.1))
    return to_data_uri(fig)


def pairs_plot(pairs: Sequence[PairedComparison]) -> str:
    """Each pair's mean score difference with its confidence interval."""
    fig = Figure(figsize=(7, 0.5 + 0.45 * max(len(pairs), 1)))
    ax = fig.add_subplot()
    ys = list(range(len(pairs)))[::-1]
    for y, p in zip(ys, pairs, strict=True):
        colour = "#2ca02c" if p.ci_low > 0 else "#d62728" if p.ci_high < 0 else "#7f7f7f"
        ax.errorbar(p.mean_diff, y, xerr=[[p.mean_diff - p.ci_low], [p.ci_high - p.mean_diff]],
                    fmt="o", color=colour, capsize=3)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(ys, [f"{p.a} − {p.b}" for p in pairs])
    ax.set_xlabel("mean score difference per scenario (95% bootstrap CI)")
    ax.grid(axis="x", alpha=0.3)
    return to_data_uri(fig)


def size_plot(buckets: Sequence[SizeBucket], routers: Sequence[str]) -> str:
    """Success, attempts per payment and fee ppm by payment size, per router."""
    labels = list(dict.fromkeys(b.label for b in sorted(buckets, key=lambda b: b.low_sat)))
    colour = colours(routers)
    fig = Figure(figsize=(11, 3.4))
    metrics = (("success", "success rate"), ("attempts_per_payment", "attempts / payment"),
               ("fee_ppm", "fee ppm (delivered)"))
    for i, (field, title) in enumerate(metrics, 1):
        ax = fig.add_subplot(1, 3, i)
        for router in routers:
            mine = {b.label: getattr(b, field) for b in buckets if b.router == router}
            xs = [j for j, label in enumerate(labels) if mine.get(label) is not None]
            ax.plot(xs, [mine[labels[j]] for j in xs], marker="o", label=router,
                    color=colour[router])
        ax.set_xticks(range(len(labels)), labels, rotation=30, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    fig.axes[0].legend(fontsize=8)
    fig.tight_layout()
    return to_data_uri(fig)
