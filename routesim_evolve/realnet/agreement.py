"""The per-attempt agreement table: every route a served candidate sent on real
nodes, its real outcome beside what the simulator's forwarding rules predict
from the channel state the route's nodes showed just before it was sent.

The prediction is the trusted `realreplay` tool's (go/cmd/realreplay, which
runs go/sim's own forward on the observed state: go/sim/replay.go), so the
rules compared are the simulator's, not a copy of them. An attempt agrees when
both say it arrived (the real shard settled or is held by the receiver), or
both fail it at the same node with the same code and both with or both without
a channel update. lnd's own SendPaymentV2 sends its shards inside the real
process, where no state can be read just before each: its attempts are not in
the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from routesim_evolve.build.tools import SIMULATOR_PACKAGES, GoTool, run_tool
from routesim_evolve.realnet.network import RealnetError
from routesim_evolve.realnet.observe import Observed
from routesim_evolve.realnet.play import RealAttempt, RealPayment

#: realreplay and the packages it is built from.
REALREPLAY = GoTool(
    name="realreplay",
    main=Path("cmd/realreplay"),
    packages=(Path("cmd/realreplay"), Path("realnet"), *SIMULATOR_PACKAGES),
)

#: The real outcomes that mean the shard reached the receiver and was accepted.
ARRIVED = ("settled", "held")


class Predicted(BaseModel):
    """realreplay's answer for one observed attempt (go/realnet.Predicted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: str
    failure_index: int
    has_update: bool
    error: str = ""


class AgreementRow(BaseModel):
    """One real attempt beside the simulator's prediction."""

    model_config = ConfigDict(frozen=True)

    payment: int
    round: int
    scids: list[str]
    amount_msat: int
    real: str  # "arrived" or the real failure, e.g. "TEMPORARY_CHANNEL_FAILURE@1+update"
    predicted: str
    agrees: bool
    cause: str = ""  # for a disagreement: what the record shows about it


def predict(observed: Sequence[Observed]) -> list[Predicted]:
    """The simulator's prediction for each observed attempt, in order."""
    if not observed:
        return []
    lines = "".join(o.model_dump_json() + "\n" for o in observed).encode()
    done = run_tool(REALREPLAY, [], timeout=600, input=lines)
    if done.returncode != 0:
        raise RealnetError(f"realreplay: {done.stderr.decode(errors='replace').strip()}")
    out = [Predicted.model_validate(json.loads(line)) for line in done.stdout.splitlines()]
    if len(out) != len(observed):
        raise RealnetError(f"realreplay answered {len(out)} of {len(observed)} attempts")
    return out


def agreement_table(payments: Iterable[RealPayment]) -> list[AgreementRow]:
    """Every observed real attempt of the payments beside its prediction."""
    attempts = [(p, i) for p in payments for i, a in enumerate(p.attempt_log)
                if a.observed is not None]
    predictions = predict([p.attempt_log[i].observed for p, i in attempts])  # type: ignore[misc]
    rows = []
    for (p, i), pred in zip(attempts, predictions, strict=True):
        a = p.attempt_log[i]
        real = _real(a)
        said = f"cannot replay: {pred.error}" if pred.error else _said(pred)
        agrees = not pred.error and real == said
        rows.append(AgreementRow(
            payment=p.index, round=a.round, scids=a.scids, amount_msat=a.amount_msat,
            real=real, predicted=said, agrees=agrees,
            cause="" if agrees else _cause(i, p.attempt_log, pred)))
    return rows


def _real(a: RealAttempt) -> str:
    if a.outcome in ARRIVED:
        return "arrived"
    return f"{a.outcome}@{a.failure_index}{'+update' if a.has_update else ''}"


def _said(p: Predicted) -> str:
    if p.failure_index < 0:
        return "arrived"
    return f"{p.outcome}@{p.failure_index}{'+update' if p.has_update else ''}"


def _cause(position: int, log: list[RealAttempt], p: Predicted) -> str:
    """What the record shows about the disagreement of log[position]: the
    observation could not be replayed, or an earlier shard of the same round
    (in flight while this one's state was read, so maybe not yet on every
    channel) shared a channel with it; else nothing the record explains."""
    if p.error:
        return "the observation could not be replayed"
    a = log[position]
    earlier = [b for b in log[:position] if b.round == a.round]
    shared = sorted({s for b in earlier for s in b.scids} & set(a.scids))
    if shared:
        return f"an earlier shard of its round was in flight on {', '.join(shared)}"
    return "unexplained: the rules and the real node differ on this state"


def agreement_share(rows: Sequence[AgreementRow]) -> float:
    """The share of attempts that agree (1.0 with none)."""
    return sum(r.agrees for r in rows) / len(rows) if rows else 1.0


def format_table(rows: Sequence[AgreementRow]) -> str:
    """The table's disagreements (every one) and its agreement line."""
    lines = [f"agreement {100 * agreement_share(rows):.1f} % of {len(rows)} attempts"]
    for r in rows:
        if not r.agrees:
            lines.append(f"  payment {r.payment} round {r.round} {'→'.join(r.scids)} "
                         f"{r.amount_msat} msat: real {r.real}, "
                         f"simulator {r.predicted} ({r.cause})")
    return "\n".join(lines)
