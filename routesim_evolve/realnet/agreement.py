"""The per-attempt agreement table: every route a served candidate sent on real
nodes, its real outcome beside what the simulator's forwarding rules predict
from the channel state the round's nodes showed just before its shards went out.

The prediction is the trusted `realreplay` tool's (go/cmd/realreplay, which
runs go/sim's own forwarding on the observed state: go/sim/replay.go), so the
rules compared are the simulator's, not a copy of them. A round's shards are
predicted as a simulated round forwards them: hop by hop together, in the
order sent at each step. An attempt agrees when
both say it arrived (the real shard settled or is held by the receiver), or
both fail it at the same node with the same code. Whether a failure carried a
channel update is not compared: at the sender's own channel lnd sometimes
attaches one and the simulator never hands one to the router (there is nothing
for the sender to learn of its own channel). lnd's own SendPaymentV2 sends its
shards inside the real process, where no state can be read just before each:
its attempts are not in the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

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
    real: str  # "arrived" or the real failure at its position, e.g. "TEMPORARY_CHANNEL_FAILURE@1"
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


class Outcome(NamedTuple):
    """An attempt's outcome as compared: the failure's code and the failing
    node's position, or ARRIVED_AT (the issue's "same outcome, same failing
    hop, same code")."""

    code: str
    index: int

    def __str__(self) -> str:
        return "arrived" if self.index < 0 else f"{self.code}@{self.index}"


#: The outcome of a shard that reached the receiver and was accepted.
ARRIVED_AT = Outcome("arrived", -1)


def agreement_table(payments: Iterable[RealPayment]) -> list[AgreementRow]:
    """Every attempt of every observed round beside its prediction."""
    rounds = [(p, r) for p in payments for r in range(len(p.observations))]
    predictions = predict([p.observations[r] for p, r in rounds])
    rows = []
    for (p, r), said in zip(rounds, predictions, strict=True):
        attempts = [a for a in p.attempt_log if a.round == r]
        if said.error or len(said.predictions) != len(attempts):
            why = said.error or f"{len(said.predictions)} predictions for {len(attempts)} shards"
            rows += [_row(p.index, a, f"cannot replay: {why}",
                          "the observation could not be replayed") for a in attempts]
            continue
        matched = _match_interchangeable(attempts, [_said(x) for x in said.predictions])
        causes = _causes(attempts, matched)
        rows += [_row(p.index, a, str(predicted), cause)
                 for a, predicted, cause in zip(attempts, matched, causes, strict=True)]
    return rows


def _match_interchangeable(attempts: list[RealAttempt], said: list[Outcome]) -> list[Outcome]:
    """The prediction each shard is compared with. Shards of one round over
    the same channels with the same amount are interchangeable: no rule
    tells them apart, and the real nodes need not take them in the order
    sent. So within each such group the predictions are matched to the
    real outcomes as a multiset (agreeing ones first, the rest in order)."""
    groups: dict[tuple[tuple[str, ...], int], list[int]] = {}
    for k, a in enumerate(attempts):
        groups.setdefault((tuple(a.scids), a.amount_msat), []).append(k)
    out = list(said)
    for members in groups.values():
        left = [said[k] for k in members]
        unmatched = []
        for k in members:
            real = _real(attempts[k])
            if real in left:
                left.remove(real)
                out[k] = real
            else:
                unmatched.append(k)
        for k, rest in zip(unmatched, left, strict=True):
            out[k] = rest
    return out


def _causes(attempts: list[RealAttempt], said: list[Outcome]) -> list[str]:
    """For each disagreement of a round, what the record shows ("" where the
    shard agrees): two shards raced for one channel, each failing in one
    telling where the other arrived (the real nodes let the other through
    first: two shards at the same hop of their routes, whose order the
    simulator takes as sent); else another shard
    crossed one of its channels; else nothing the record explains."""
    real = [_real(a) for a in attempts]
    out = []
    for k, a in enumerate(attempts):
        if real[k] == said[k]:
            out.append("")
        elif any(_races(a, real[k], said[k], b, real[j], said[j])
                 for j, b in enumerate(attempts) if j != k):
            out.append(f"raced another shard of its round for "
                       f"{_failing_channel(a, real[k], said[k])}: the real nodes let the other "
                       "through first")
        elif shared := sorted({x for b in attempts if b is not a for x in b.scids}
                              & set(a.scids)):
            out.append(f"another shard of its round was in flight on {', '.join(shared)}")
        else:
            out.append("unexplained: the rules and the real node differ on this state")
    return out


def _failing_channel(a: RealAttempt, real: Outcome, said: Outcome) -> str:
    """The channel out of the node that fails `a`, in whichever telling fails it."""
    index = said.index if real == ARRIVED_AT else real.index
    return a.scids[index] if index < len(a.scids) else "the receiver"


def _races(a: RealAttempt, a_real: Outcome, a_said: Outcome,
           b: RealAttempt, b_real: Outcome, b_said: Outcome) -> bool:
    """Whether a and b swapped fates at one channel: one arrives really and
    fails in the simulator there, the other the reverse."""
    swapped = ((a_real == ARRIVED_AT and b_said == ARRIVED_AT
                and a_said != ARRIVED_AT and b_real != ARRIVED_AT)
               or (a_said == ARRIVED_AT and b_real == ARRIVED_AT
                   and a_real != ARRIVED_AT and b_said != ARRIVED_AT))
    return swapped and _failing_channel(a, a_real, a_said) == _failing_channel(b, b_real, b_said)


def _row(payment: int, a: RealAttempt, predicted: str, cause: str) -> AgreementRow:
    real = str(_real(a))
    return AgreementRow(payment=payment, round=a.round, scids=a.scids, amount_msat=a.amount_msat,
                        real=real, predicted=predicted, agrees=real == predicted, cause=cause)


def _real(a: RealAttempt) -> Outcome:
    return ARRIVED_AT if a.outcome in ARRIVED else Outcome(a.outcome, a.failure_index)


def _said(p: Predicted) -> Outcome:
    return ARRIVED_AT if p.failure_index < 0 else Outcome(p.outcome, p.failure_index)


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
