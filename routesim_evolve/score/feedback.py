"""Diagnostic feedback: what the reflection model learns from one scenario.

The feedback says where and why the candidate failed, most important first:
how it compares with the production routers (lnd's and LDK's), where its
score can still grow axis by axis (the feasible payments it missed, its
failed attempts, rounds and fees above the cheapest plans), the payments lnd
or LDK delivered and it did not, how its payments ended, where along the
route its attempts failed, how the failure reports were degraded, and what
it paid over the first reference (lnd-apriori). It stays compact: the
reflection prompt holds several scenarios at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from routesim_evolve.score.axes import ScoreAxes, score_result
from routesim_evolve.simulate.result_format import PaymentResult, Result
from routesim_evolve.simulate.routers import stack_of

#: The side-info key under which GEPA carries a ScenarioFeedback to the proposers.
SIDE_INFO_KEY = "routesim_feedback"


class ScenarioFeedback(BaseModel):
    """What a proposer learns from one minibatch scenario: the one typed
    form of feedback, from the evaluator to every proposer and prompt."""

    model_config = ConfigDict(frozen=True)

    scenario: str
    arena: str
    score: float
    axes: ScoreAxes
    references: dict[str, ScoreAxes]
    text: str
    #: Each payment's share of the score (score/axes.py payment_shares);
    #: empty when the run left no result.
    shares: list[float] = []

    @property
    def title(self) -> str:
        return f"{self.scenario} ({self.arena})"

    def side_info(self) -> dict[str, Any]:
        """As GEPA keeps it: plain data under our key, plus `scores` (all
        four axes), which GEPA's per-objective frontier reads."""
        return {"scores": self.axes.as_dict(), SIDE_INFO_KEY: self.model_dump(mode="json")}

    @classmethod
    def from_side_info(cls, entry: Mapping[str, Any]) -> ScenarioFeedback:
        """Back from an entry of GEPA's reflective dataset."""
        return cls.model_validate(entry[SIDE_INFO_KEY])


# How many payments each list names at most.
LIST_LIMIT = 5
# How long an error text may be in the feedback.
ERROR_CHARS = 160


def describe_result(
    result: Result, references: Mapping[str, Result], *, limit: int = LIST_LIMIT,
    oracle: Result | None = None,
) -> str:
    """Feedback on a candidate's result, with the production routers' results
    for reference and, when given, what the clairvoyant oracle did with the
    same payments."""
    sections = [
        _headline(result, references),
        _headroom(result, limit),
        _missed_payments(result, references, limit),
        _oracle_contrast(result, oracle, limit) if oracle is not None else "",
        _endings(result),
        _failures_by_position(result),
        _attempts_by_label(result),
        _degradation(result),
        _fees_over_reference(result, references, limit),
    ]
    return "\n\n".join(s for s in sections if s)


def _headline(result: Result, references: Mapping[str, Result]) -> str:
    lines = [f"Scenario {result.scenario} (arena {result.arena}), {len(result.payments)} payments."]
    for name, res in {"candidate": result, **references}.items():
        lines.append(f"- {name}: {_summary(res, score_result(res))}")
    return "\n".join(lines)


def _summary(res: Result, axes: ScoreAxes) -> str:
    t = res.totals
    return (
        f"delivered {t.succeeded}/{t.payments} ({t.feasible} feasible in its world: no router "
        f"could deliver the others), {t.attempts_per_payment:.1f} attempts/payment, "
        f"fees {t.fee_ppm:.0f} ppm; score {axes.score:.3f} "
        f"(success {axes.success:.2f}, retry {axes.retry_efficiency:.2f}, "
        f"time {axes.time_efficiency:.2f}, fee {axes.fee_efficiency:.2f})"
    )


def _headroom(result: Result, limit: int) -> str:
    """Where the score can still grow in this world, axis by axis, in score
    points: the feasible payments missed, and on delivered payments the
    failed attempts, the rounds after the first and the fees above the
    cheapest plans (a lower bound: not all of it is within reach)."""
    payments = result.payments
    if not payments:
        return ""
    axes, share = score_result(result), 1 / (len(payments) + 1)
    missed = [p for p in payments if p.feasible and not p.success]
    shown = ", ".join(f"#{p.index}" for p in missed[:limit])
    more = f" and {len(missed) - limit} more" if len(missed) > limit else ""
    infeasible = sum(not p.feasible for p in payments)
    lines = ["Where your score can still grow here (what each axis could add at most):",
             f"- success +{len(missed) * share:.3f}: {len(missed)} feasible payment(s) missed"
             + (f" ({shown}{more})" if missed else "")
             + f"; {infeasible} infeasible in your world (no router could deliver them)"]
    delivered = [p for p in payments if p.success]
    if delivered:
        # What each efficiency term would be at 1, less what it is.
        now = axes.terms()
        best = axes.model_copy(update={"retry_efficiency": 1.0, "time_efficiency": 1.0,
                                       "fee_efficiency": 1.0}).terms()

        def gain(term: str) -> str:
            return f"+{getattr(best, term) - getattr(now, term):.3f}"

        failed = sum(max(p.attempts - p.parts, 0) for p in delivered)
        rounds = sum(max(p.rounds - 1, 0) for p in delivered)
        over = sum(max(p.fee_msat - p.cheapest_fee_msat, 0) for p in delivered)
        lines += [
            f"- retry {gain('retry')}: {failed} failed attempt(s) on delivered payments",
            f"- time {gain('time')}: {rounds} round(s) after the first on delivered payments",
            f"- fee {gain('fee')}: {over:,} msat paid above the cheapest "
            "plans (a lower bound on any router's fee)",
        ]
    return "\n".join(lines)


def _missed_payments(result: Result, references: Mapping[str, Result], limit: int) -> str:
    """Payments some production router (lnd's, LDK's) delivered and the
    candidate did not."""
    missed = []
    for p in result.payments:
        if p.success:
            continue
        by = [n for n, ref in references.items() if _delivered(ref, p.index)]
        if by:
            missed.append((p, by))
    if not missed:
        return ""
    names = " or ".join(dict.fromkeys(stack_of(n) for n in references))
    lines = [f"Payments {names} delivered and you did not ({len(missed)}):"]
    for p, by in missed[:limit]:
        lines.append(f"- {_payment_line(p)}; delivered by {', '.join(by)}")
    if len(missed) > limit:
        lines.append(f"- … and {len(missed) - limit} more")
    return "\n".join(lines)


def _oracle_contrast(result: Result, oracle: Result, limit: int) -> str:
    """What the oracle (it reads every balance: a ceiling, not a router to
    copy) did with the payments, where the candidate did worse: the feasible
    payments it delivered and the candidate did not, and its attempts,
    rounds and fees on the payments both delivered."""
    if len(oracle.payments) != len(result.payments):
        return ""
    pairs = list(zip(result.payments, oracle.payments, strict=True))
    missed = [(p, o) for p, o in pairs if o.success and not p.success]
    both = [(p, o) for p, o in pairs if o.success and p.success]
    if not missed and not both:
        return ""
    lines = ["What the oracle (it sees every balance: the ceiling) did here:"]
    for p, o in missed[:limit]:
        lines.append(f"- #{p.index} you missed; it delivered it in {_how(o)}")
    if len(missed) > limit:
        lines.append(f"- … and {len(missed) - limit} more you missed")
    if both:
        def total(rs: list[PaymentResult], field: str) -> int:
            return sum(getattr(r, field) for r in rs)
        mine, its = [p for p, _ in both], [o for _, o in both]
        lines.append(
            f"- on the {len(both)} payment(s) you both delivered: attempts "
            f"{total(mine, 'attempts')} vs its {total(its, 'attempts')}, rounds "
            f"{total(mine, 'rounds')} vs "
            f"{total(its, 'rounds')}, fees {total(mine, 'fee_msat'):,} vs "
            f"{total(its, 'fee_msat'):,} msat")
    return "\n".join(lines)


def _how(o: PaymentResult) -> str:
    return (f"{o.parts} part(s), {o.attempts} attempt(s), {o.rounds} round(s), "
            f"fee {o.fee_msat:,} msat")


def _delivered(ref: Result, index: int) -> bool:
    return index < len(ref.payments) and ref.payments[index].success


def _payment_line(p: PaymentResult) -> str:
    sat = p.amount_msat // 1000
    text = f"#{p.index} {sat:,} sat: {p.failure_reason or 'failed'} after {p.attempts} attempts"
    if p.delivered_msat:
        text += f" ({p.delivered_msat // 1000:,} sat arrived)"
    if not p.feasible:
        text += " (infeasible in your world: no router could have delivered it then)"
    if p.error:
        text += f', error "{_clip(p.error)}"'
    if p.failures:
        codes = ", ".join(f"{code}×{n}" for code, n in Counter(p.failures).most_common(3))
        text += f"; told: {codes}"
    return text


def _endings(result: Result) -> str:
    """How failed payments ended, with their distinct errors."""
    failed = [p for p in result.payments if not p.success]
    if not failed:
        return ""
    reasons = Counter(p.failure_reason for p in failed)
    counted = ", ".join(f"{r}×{n}" for r, n in reasons.most_common())
    lines = [f"How failed payments ended: {counted}"]
    errors = Counter(_clip(p.error) for p in failed if p.error)
    lines += [f'- "{e}" ×{n}' for e, n in errors.most_common(3)]
    return "\n".join(lines)


def _attempts_by_label(result: Result) -> str:
    """Attempts and failures by the branch of the router that sent them
    (the labels of routing.RouteLabeler), when it names them."""
    sent: Counter[str] = Counter()
    failed: dict[str, Counter[str]] = {}
    for p in result.payments:
        for a in p.attempt_log:
            if not a.label:
                continue
            sent[a.label] += 1
            if a.fail_idx >= 0:
                failed.setdefault(a.label, Counter())[a.outcome] += 1
    if not sent:
        return ""
    lines = ["Attempts by your route labels (RouteLabel): sent, failed, how:"]
    for label, n in sent.most_common(8):
        codes = failed.get(label, Counter())
        how = ", ".join(f"{c}×{k}" for c, k in codes.most_common(2))
        lines.append(f"- {label}: {n} sent, {sum(codes.values())} failed"
                     + (f" ({how})" if how else ""))
    return "\n".join(lines)


def _failures_by_position(result: Result) -> str:
    """True failure codes by where on the route they happened."""
    table: Counter[tuple[str, str]] = Counter()
    for p in result.payments:
        for a in p.attempt_log:
            if a.fail_idx >= 0:
                table[(a.outcome, _position(a.fail_idx, a.hops))] += 1
    if not table:
        return ""
    lines = ["Where attempts failed (true code @ position, count):"]
    lines += [f"- {code} @ {pos}: {n}" for (code, pos), n in table.most_common(8)]
    return "\n".join(lines)


def _position(idx: int, hops: int) -> str:
    if idx == 0:
        return "sender (own channel)"
    if idx == hops:
        return "receiver"
    return f"hop {idx} of {hops}"


def _degradation(result: Result) -> str:
    """How many failure reports were degraded, and how."""
    failures = [a for p in result.payments for a in p.attempt_log if a.fail_idx >= 0]
    degraded = Counter(a.degraded for a in failures if a.degraded and a.degraded != "none")
    if not degraded:
        return ""
    total = sum(degraded.values())
    kinds = ", ".join(f"{k}×{n}" for k, n in degraded.most_common())
    return (
        f"{total} of {len(failures)} failure reports were degraded ({kinds}): "
        "stripped reports blame a node off the route with no code; shifted ones blame "
        "the neighbour of the real failing node."
    )


def _fees_over_reference(result: Result, references: Mapping[str, Result], limit: int) -> str:
    """Delivered payments where the candidate paid more than the first
    reference (lnd-apriori) did."""
    ref = next(iter(references.values()), None)
    if ref is None:
        return ""
    over = []
    for p in result.payments:
        if p.success and _delivered(ref, p.index):
            extra = p.fee_msat - ref.payments[p.index].fee_msat
            if extra > 0:
                over.append((extra, p, ref.payments[p.index].fee_msat))
    if not over:
        return ""
    over.sort(key=lambda item: (-item[0], item[1].index))
    name = next(iter(references))
    lines = [f"Payments where you paid more fees than {name} ({len(over)}):"]
    for extra, p, ref_fee in over[:limit]:
        lines.append(f"- #{p.index}: {p.fee_msat} msat vs {ref_fee} msat (+{extra})")
    return "\n".join(lines)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"
