"""What every reflection back-end shares: the prompt shape, the interface,
and the retry loop for transient failures."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Literal, Protocol, TypedDict, TypeVar, Unpack, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from routesim_evolve.reflect.cost import CostLedger
from routesim_evolve.reflect.errors import ProposalFailed, TransientError
from routesim_evolve.reflect.usage import Completion

log = logging.getLogger(__name__)

T = TypeVar("T")
Sleep = Callable[[float], None]


class FollowUp(BaseModel):
    """One more turn after the first: what the LM answered, what we ask next."""

    model_config = ConfigDict(frozen=True)

    reply: str
    request: str


class PromptParts(BaseModel):
    """A reflection prompt split where provider prompt caches can use it.

    `static` is the long prefix that is the same on every iteration
    (objective, background, contract signatures); `dynamic` is this
    iteration's part (current candidate, feedback). Back-ends always send
    `static` first, so the cached prefix is reused across iterations.
    """

    model_config = ConfigDict(frozen=True)

    static: str
    dynamic: str
    follow_ups: tuple[FollowUp, ...] = ()

    def with_follow_up(self, reply: str, request: str) -> PromptParts:
        return self.model_copy(
            update={"follow_ups": (*self.follow_ups, FollowUp(reply=reply, request=request))}
        )

    def conversation(self, *, empty_reply: str | None = None) -> list[dict[str, str]]:
        """The turns after the static part, as chat messages: this
        iteration's request, then each follow-up (the model's reply, our next
        request). With `empty_reply`, a blank reply is sent as that text
        (for APIs that reject empty turns)."""
        turns = [{"role": "user", "content": self.dynamic}]
        for turn in self.follow_ups:
            reply = turn.reply if empty_reply is None else turn.reply.strip() or empty_reply
            turns.append({"role": "assistant", "content": reply})
            turns.append({"role": "user", "content": turn.request})
        return turns

    def flat(self) -> str:
        """The whole conversation as one text, for tools that take a single
        prompt (the agent CLIs). The static part still comes first."""
        parts = [self.static.rstrip(), self.dynamic.rstrip()]
        for turn in self.follow_ups:
            parts.append("## Your previous reply\n\n" + turn.reply.rstrip())
            parts.append("## Follow-up\n\n" + turn.request.rstrip())
        return "\n\n".join(parts) + "\n"


@runtime_checkable
class ReflectionBackend(Protocol):
    """An LM (or agent) that answers a reflection prompt with text.

    `preflight` checks, before the run, that the back-end can work at all
    (credentials, CLI, server) and raises `BackendUnavailable` saying what
    to set. `complete` retries transient failures itself and raises only
    `ProposalFailed` when it finally gives up. `model` names what the price
    table is looked up by (None: the tool's own default).
    """

    name: str
    model: str | None

    def preflight(self) -> None: ...

    def complete(self, prompt: PromptParts) -> Completion: ...


class BackendOptions(BaseModel):
    """How every back-end talks to its model; the CLI's options fill it."""

    model_config = ConfigDict(frozen=True)

    idle_timeout: float = Field(
        default=300.0, gt=0,
        description="seconds without any progress (a streamed token, an agent event) "
        "before a request or an agent run is given up and retried",
    )
    agent_timeout: float = Field(
        default=1800.0, gt=0, description="seconds one agent CLI run may take in all"
    )
    cache_ttl: Literal["5m", "1h"] = Field(
        default="5m",
        description="how long Anthropic keeps the cached prompt prefix; 1h costs more per "
        "write but pays when iterations are slower than five minutes",
    )
    max_output_tokens: int = Field(
        default=64_000, gt=0,
        description="output tokens asked for (thinking included), capped by the model's own limit",
    )


class RetryPolicy(BaseModel):
    """Exponential backoff with jitter and a cap on tries."""

    model_config = ConfigDict(frozen=True)

    max_tries: int = Field(default=4, ge=1)
    base_delay: float = Field(default=2.0, ge=0.0)
    max_delay: float = Field(default=60.0, ge=0.0)
    # Fraction of each delay that is randomised, so parallel workers hitting
    # the same rate limit do not retry in lockstep.
    jitter: float = Field(default=0.5, ge=0.0, le=1.0)

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after failed try number `attempt` (0-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0**attempt)
        return ceiling * (1.0 - self.jitter * rng.random())


def with_retries(
    call: Callable[[], T],
    *,
    policy: RetryPolicy,
    what: str,
    sleep: Sleep = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """Run `call`, retrying `TransientError` per `policy`; when the tries run
    out, raise `ProposalFailed` naming the last failure."""
    rng = rng or random.Random()
    last: TransientError | None = None
    for attempt in range(policy.max_tries):
        try:
            return call()
        except TransientError as err:
            last = err
            if attempt + 1 >= policy.max_tries:
                break
            wait = policy.delay(attempt, rng)
            if err.retry_after is not None:
                wait = max(wait, min(err.retry_after, policy.max_delay))
            log.warning("%s: %s; retrying in %.1fs", what, err.reason, wait)
            sleep(wait)
    assert last is not None
    raise ProposalFailed(f"{what}: gave up after {policy.max_tries} tries: {last.reason}")


class Retrying:
    """The retry settings a back-end is made with, and the call that applies
    them; each back-end keeps one instead of three loose fields."""

    def __init__(
        self,
        what: str,
        policy: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.what = what
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.rng = rng

    def run(self, call: Callable[[], T]) -> T:
        """`call` under with_retries."""
        return with_retries(
            call, policy=self.policy, what=self.what, sleep=self.sleep, rng=self.rng
        )


def is_transient_status(status: int) -> bool:
    """HTTP statuses worth retrying: timeout, conflict, rate limit, server
    errors and Anthropic's 529 overloaded."""
    return status in (408, 409, 429) or status >= 500


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's Retry-After hint in seconds, if it gave a numeric one."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: rare enough to fall back to our backoff
    return None


def backend_name(provider: str, model: str, effort: str | None) -> str:
    """A back-end's name as `--reflection-lm` spells it: provider:model, then
    :effort when one is asked for."""
    return ":".join(p for p in (provider, model, effort) if p)


def accepted_effort(model: str, effort: str | None, *, taken: bool, why: str) -> str | None:
    """`effort` when the model takes one (`taken`); otherwise None, with a
    warning saying `why` and that the effort is not sent."""
    if effort and not taken:
        log.warning("%s: %s; effort %r is not sent", model, why, effort)
        return None
    return effort


class Plumbing(TypedDict, total=False):
    """How any back-end calls out, passed through as keywords: its options,
    its retry policy, the clock and randomness of its backoff (tests pass
    fakes), and the meter it charges each reply's usage to."""

    options: BackendOptions | None
    retry: RetryPolicy | None
    sleep: Sleep
    rng: random.Random | None
    # The run's cost ledger, charged with every reply's usage.
    meter: CostLedger | None


class PlumbedBackend:
    """What every back-end keeps of its plumbing: options, the meter, and
    the retrying of its calls (named after the back-end: set `name` first)."""

    name: str = ""

    def __init__(self, **plumbing: Unpack[Plumbing]) -> None:
        self.options = plumbing.get("options") or BackendOptions()
        self.meter = plumbing.get("meter")
        self._retrying = Retrying(self.name, plumbing.get("retry"),
                                  plumbing.get("sleep", time.sleep), plumbing.get("rng"))


class APIBackend(PlumbedBackend):
    """What the HTTP API back-ends share: a name and a model given at
    construction, retries around one request, and the usage of every reply
    reported to the meter."""

    model: str = ""

    def __init__(self, name: str, model: str, **plumbing: Unpack[Plumbing]) -> None:
        self.name = name
        self.model = model
        super().__init__(**plumbing)

    def complete(self, prompt: PromptParts) -> Completion:
        completion = self._retrying.run(lambda: self._call(prompt))
        if self.meter is not None:
            self.meter.charge(self.name, self.model, completion.usage)
        return completion

    def _call(self, prompt: PromptParts) -> Completion:
        raise NotImplementedError
