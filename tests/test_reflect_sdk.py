"""What the Anthropic and OpenAI back-ends do alike — a follow-up after a
reply with no code, backoff and Retry-After, giving up, permanent errors —
tested on each provider's recorded wire shapes through its real SDK client."""

from __future__ import annotations

import httpx2
import llm_shapes
import pytest
from sdk_transport import (
    ANTHROPIC,
    GO_FILE,
    GOOD_REPLY,
    OPENAI,
    PROMPT,
    PROVIDERS,
    Provider,
    QueuedServer,
    Reply,
    event_stream,
)

from routesim_evolve.reflect.errors import ProposalFailed
from routesim_evolve.reflect.reply import propose

each_provider = pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)


@each_provider
def test_garbage_reply_is_retried_once_with_a_follow_up(provider: Provider) -> None:
    server = QueuedServer([provider.ok("Lower the fee weight."), provider.ok(GOOD_REPLY)])
    assert propose(provider.backend(server), PROMPT) == GO_FILE
    first_static, _ = provider.turns(server.bodies[0])
    static, turns = provider.turns(server.bodies[1])
    assert len(turns) == 3
    assert turns[0] == {"role": "user", "content": PROMPT.dynamic}
    assert turns[1] == {"role": "assistant", "content": "Lower the fee weight."}
    assert "```go" in turns[2]["content"]
    # The static prefix is unchanged, so the follow-up hits the cache too.
    assert static == first_static


@each_provider
@pytest.mark.parametrize(
    "second_reply,reason",
    [("```go\npackage main\nfunc f() {\n", "cut off"),
     ("```python\nprint('hi')\n```\n", "package main")],
    ids=["cut-off-go", "not-go"],
)
def test_garbage_twice_raises_proposal_failed(
    provider: Provider, second_reply: str, reason: str
) -> None:
    server = QueuedServer([provider.ok("no code"), provider.ok(second_reply)])
    with pytest.raises(ProposalFailed, match=reason):
        propose(provider.backend(server), PROMPT)
    assert len(server.bodies) == 2


@each_provider
@pytest.mark.parametrize(
    "headers,second_wait",
    [({}, 2.0), ({"retry-after": "7"}, 7.0), ({"retry-after-ms": "4500"}, 4.5)],
    ids=["backoff", "retry-after", "retry-after-ms"],
)
def test_timeout_and_rate_limit_are_retried_with_backoff(
    provider: Provider, headers: dict[str, str], second_wait: float
) -> None:
    sleeps: list[float] = []
    rate_limited = provider.error(429, provider.rate_limit, headers)
    server = QueuedServer([httpx2.ReadTimeout("timed out"), rate_limited, provider.ok(GOOD_REPLY)])
    assert propose(provider.backend(server, sleeps=sleeps), PROMPT) == GO_FILE
    assert len(server.bodies) == 3
    # 1 s after the timeout, then 2 s of backoff, raised to the server's
    # Retry-After where it gives a longer one.
    assert sleeps == [1.0, second_wait]


@pytest.mark.parametrize(
    "provider,status,kind,headers,wait",
    [
        (ANTHROPIC, 529, "overloaded_error", {}, 1.0),
        (ANTHROPIC, 500, "api_error", {}, 1.0),
        (OPENAI, 500, "server_error", {}, 1.0),
        (OPENAI, 503, "server_error", {"retry-after-ms": "4500"}, 4.5),
    ],
    ids=["anthropic-529", "anthropic-500", "openai-500", "openai-503-retry-after-ms"],
)
def test_overload_and_server_errors_are_transient(
    provider: Provider, status: int, kind: str, headers: dict[str, str], wait: float
) -> None:
    sleeps: list[float] = []
    server = QueuedServer([provider.error(status, kind, headers), provider.ok(GOOD_REPLY)])
    assert provider.backend(server, sleeps=sleeps).complete(PROMPT).text == GOOD_REPLY
    assert sleeps == [wait]


@each_provider
@pytest.mark.parametrize(
    "failure,reason", [("timeout", "Timeout"), ("rate-limit", "HTTP 429")], ids=["timeout", "429"]
)
def test_persistent_failure_gives_up_with_proposal_failed(
    provider: Provider, failure: str, reason: str
) -> None:
    sleeps: list[float] = []
    reply: Reply = (
        httpx2.ReadTimeout("timed out") if failure == "timeout"
        else provider.error(429, provider.rate_limit)
    )
    server = QueuedServer([reply] * 3)
    with pytest.raises(ProposalFailed, match=f"gave up after 3 tries: .*{reason}"):
        provider.backend(server, sleeps=sleeps).complete(PROMPT)
    assert len(server.bodies) == 3
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize(
    "provider,status,kind",
    [
        (ANTHROPIC, 400, "invalid_request_error"),
        (OPENAI, 400, "invalid_request_error"),
        # A 429 for an exhausted quota will not clear by waiting.
        (OPENAI, 429, "insufficient_quota"),
    ],
    ids=["anthropic-400", "openai-400", "openai-quota"],
)
def test_permanent_errors_are_not_retried(provider: Provider, status: int, kind: str) -> None:
    server = QueuedServer([provider.error(status, kind), provider.ok(GOOD_REPLY)])
    with pytest.raises(ProposalFailed, match=f"HTTP {status}") as failed:
        provider.backend(server).complete(PROMPT)
    assert len(server.bodies) == 1
    assert failed.value.permanent


def _retried_or_refused(provider: Provider, failing: httpx2.Response, said: str | None) -> None:
    """A failing stream then a good reply: retried once after 1 s when
    `said` is None, else refused at once as permanent, saying `said`."""
    sleeps: list[float] = []
    backend = provider.backend(QueuedServer([failing, provider.ok(GOOD_REPLY)]), sleeps=sleeps)
    if said is None:
        assert backend.complete(PROMPT).text == GOOD_REPLY and sleeps == [1.0]
        return
    with pytest.raises(ProposalFailed) as info:
        backend.complete(PROMPT)
    assert info.value.permanent and said in str(info.value) and not sleeps


@pytest.mark.parametrize(("kind", "said"), [("overloaded_error", None),
                                            ("invalid_request_error", "invalid_request_error")])
def test_an_error_event_inside_a_200_stream_is_classified_by_its_type(
    kind: str, said: str | None
) -> None:
    _retried_or_refused(ANTHROPIC, event_stream(llm_shapes.anthropic_stream_error(kind)), said)


@pytest.mark.parametrize(("code", "said"), [
    ("server_error", None), ("invalid_prompt", "the response failed: invalid_prompt")])
def test_a_failed_responses_stream_is_classified_not_a_crash(code: str, said: str | None) -> None:
    _retried_or_refused(OPENAI, OPENAI.ok("partial", status="failed", error_code=code), said)


def test_an_incomplete_responses_stream_keeps_what_arrived_and_asks_again() -> None:
    cut = "Changes: a new planner.\n\n```go\npackage main\n\nfunc helper() int {"
    server = QueuedServer([OPENAI.ok(cut, status="incomplete"), OPENAI.ok(GOOD_REPLY)])
    assert OPENAI.backend(server).complete(PROMPT).text == cut
    assert propose(OPENAI.backend(QueuedServer([OPENAI.ok(cut, status="incomplete"),
                                                OPENAI.ok(GOOD_REPLY)])), PROMPT) == GO_FILE
