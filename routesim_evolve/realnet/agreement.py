"""The per-attempt agreement table: every route a served candidate sent on real
nodes, its real outcome beside what the simulator's forwarding rules predict
from the channel state the round's nodes showed just before its shards went out.

The prediction is the trusted `realreplay` tool's (go/cmd/realreplay, which
runs go/sim's own forward on the observed state: go/sim/replay.go), so the
rules compared are the simulator's, not a copy of them. A round's shards are
predicted in the order they were sent, each keeping what it took for the next,
as in a simulated round. An attempt agrees when
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
    """realreplay's answer for one attempt (go/realnet.Predicted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: str
    failure_index: int
    has_update: bool


class RoundPredicted(BaseModel):
    """realreplay's answer for one round (go/realnet.RoundPredicted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    predictions: list[Predicted]
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


def predict(observed: Sequence[Observed]) -> list[RoundPredicted]:
    """The simulator's prediction for each observed round, in order."""
    if not observed:
        return []
    lines = "".join(o.model_dump_json() + "\n" for o in observed).encode()
    done = run_tool(REALREPLAY, [], timeout=600, input=lines)
    if done.returncode != 0:
        raise RealnetError(f"realreplay: {done.stderr.decode(errors='replace').strip()}")
    out = [RoundPredicted.model_validate(json.loads(line)) for line in done.stdout.splitlines()]
    if len(out) != len(observed):
        raise RealnetError(f"realreplay answered {len(out)} of {len(observed)} rounds")
    return out


def agreement_table(payments: Iterable[RealPayment]) -> list[AgreementRow]:
    """Every attempt of every observed round beside its prediction."""
    rounds = [(p, r) for p in payments for r in range(len(p.observations))]
    predictions = predict([p.observations[r] for p, r in rounds])
    rows = []
    for (p, r), said in zip(rounds, predictions, strict=True):
        attempts = [a for a in p.attempt_log if a.round == r]
        for k, a in enumerate(attempts):
            if said.error or k >= len(said.predictions):
                rows.append(_row(p.index, a, f"cannot replay: {said.error or 'no prediction'}",
                                 "the observation could not be replayed"))
                continue
            predicted = _said(said.predictions[k])
            cause = "" if _real(a) == predicted else _cause(k, attempts, said.predictions)
            rows.append(_row(p.index, a, predicted, cause))
    return rows


def _row(payment: int, a: RealAttempt, predicted: str, cause: str) -> AgreementRow:
    real = _real(a)
    return AgreementRow(payment=payment, round=a.round, scids=a.scids, amount_msat=a.amount_msat,
                        real=real, predicted=predicted, agrees=not cause and real == predicted,
                        cause=cause)


def _real(a: RealAttempt) -> str:
    if a.outcome in ARRIVED:
        return "arrived"
    return f"{a.outcome}@{a.failure_index}{'+update' if a.has_update else ''}"


def _said(p: Predicted) -> str:
    if p.failure_index < 0:
        return "arrived"
    return f"{p.outcome}@{p.failure_index}{'+update' if p.has_update else ''}"


def _cause(k: int, attempts: list[RealAttempt], predictions: list[Predicted]) -> str:
    """What the record shows about the disagreement of the round's k-th
    shard: whether another shard of the round, in flight at the same time,
    crossed one of its channels, and the shards the two disagreed on agree
    once swapped (the real nodes took them in another order than sent);
    else nothing the record explains."""
    a = attempts[k]
    shared = sorted({s for b in attempts if b is not a for s in b.scids} & set(a.scids))
    if not shared:
        return "unexplained: the rules and the real node differ on this state"
    swapped = [j for j, b in enumerate(attempts) if j != k and _real(b) == _said(predictions[k])
               and _real(a) == _said(predictions[j])]
    if swapped:
        return (f"the shards of its round raced on {', '.join(shared)}: the real nodes "
                f"took shard {swapped[0]} first, the simulator the one sent first")
    return f"another shard of its round was in flight on {', '.join(shared)}"


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
