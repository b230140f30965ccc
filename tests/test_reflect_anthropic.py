"""The Anthropic back-end through the real SDK client, with an HTTP
transport serving the API's recorded streaming shapes."""

from __future__ import annotations

import json
from collections.abc import Callable

import anthropic
import httpx2
import llm_shapes
import pytest

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import BackendOptions, PromptParts, RetryPolicy
from routesim_evolve.reflect.errors import BackendUnavailable, ProposalFailed
from routesim_evolve.reflect.propose import propose

GO_FILE = "package main\n\nfunc helper() int { return 1 }\n"
GOOD_REPLY = f"Here is the new router.\n\n```go\n{GO_FILE}```\n"
PROMPT = PromptParts(static="OBJECTIVE AND CONTRACT " * 50, dynamic="CURRENT CANDIDATE + FEEDBACK")

Reply = httpx2.Response | Exception


def ok(text: str, **usage: int) -> httpx2.Response:
    return httpx2.Response(200, content=llm_shapes.anthropic_stream(text, **usage),
                           headers={"content-type": "text/event-stream"})


def error(status: int, kind: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json=llm_shapes.anthropic_error(kind), headers=headers or {})


class Server:
    """Answers each request with the next queued reply and records bodies."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, object]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def backend(
    server: Callable[[httpx2.Request], httpx2.Response],
    *,
    model: str = "claude-opus-4-7",
    effort: str | None = "high",
    sleeps: list[float] | None = None,
    tries: int = 3,
) -> AnthropicBackend:
    client = anthropic.Anthropic(
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        api_key="test",
        max_retries=0,
    )
    recorded = sleeps if sleeps is not None else []
    return AnthropicBackend(
        model,
        effort,
        client=client,
        retry=RetryPolicy(max_tries=tries, base_delay=1.0, max_delay=30.0, jitter=0.0),
        sleep=recorded.append,
    )


def test_request_carries_cache_marker_model_and_effort() -> None:
    server = Server([ok(GOOD_REPLY)])
    assert propose(backend(server), PROMPT) == GO_FILE
    body = server.bodies[0]
    assert body["model"] == "claude-opus-4-7"
    assert body["system"] == [
        {"type": "text", "text": PROMPT.static, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": PROMPT.dynamic}]
    assert body["output_config"] == {"effort": "high"}
    assert body["thinking"] == {"type": "adaptive"}
    assert body["max_tokens"] >= 32_000


def test_legacy_model_gets_a_thinking_budget_instead_of_effort() -> None:
    server = Server([ok(GOOD_REPLY)])
    backend(server, model="claude-sonnet-4-5", effort="low").complete(PROMPT)
    body = server.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4_000}
    assert "output_config" not in body


def test_no_effort_sends_no_thinking_config() -> None:
    server = Server([ok(GOOD_REPLY)])
    backend(server, effort=None).complete(PROMPT)
    assert "thinking" not in server.bodies[0]
    assert "output_config" not in server.bodies[0]


def test_garbage_reply_is_retried_once_with_a_follow_up() -> None:
    server = Server([ok("I would change the fee weight."), ok(GOOD_REPLY)])
    assert propose(backend(server), PROMPT) == GO_FILE
    follow_up = server.bodies[1]["messages"]
    assert isinstance(follow_up, list) and len(follow_up) == 3
    assert follow_up[1] == {"role": "assistant", "content": "I would change the fee weight."}
    assert "```go" in follow_up[2]["content"]
    # The static prefix is unchanged, so the follow-up hits the cache too.
    assert server.bodies[1]["system"] == server.bodies[0]["system"]


def test_garbage_twice_raises_proposal_failed() -> None:
    server = Server([ok("no code"), ok("```go\npackage main\nfunc f() {\n")])
    with pytest.raises(ProposalFailed, match="cut off"):
        propose(backend(server), PROMPT)
    assert len(server.bodies) == 2


def test_timeout_and_rate_limit_are_retried_with_backoff() -> None:
    sleeps: list[float] = []
    server = Server(
        [
            httpx2.ReadTimeout("timed out"),
            error(429, "rate_limit_error", {"retry-after": "7"}),
            ok(GOOD_REPLY),
        ]
    )
    assert propose(backend(server, sleeps=sleeps), PROMPT) == GO_FILE
    assert len(server.bodies) == 3
    # 1 s after the timeout, then 2 s of backoff raised to the server's 7 s.
    assert sleeps == [1.0, 7.0]


@pytest.mark.parametrize("status,kind", [(529, "overloaded_error"), (500, "api_error")])
def test_overload_and_server_errors_are_transient(status: int, kind: str) -> None:
    server = Server([error(status, kind), ok(GOOD_REPLY)])
    assert backend(server).complete(PROMPT).text == GOOD_REPLY


def test_persistent_rate_limit_gives_up_with_proposal_failed() -> None:
    sleeps: list[float] = []
    server = Server([error(429, "rate_limit_error")] * 3)
    with pytest.raises(ProposalFailed, match=r"gave up after 3 tries.*429"):
        backend(server, sleeps=sleeps).complete(PROMPT)
    assert sleeps == [1.0, 2.0]


def test_bad_request_is_not_retried() -> None:
    server = Server([error(400, "invalid_request_error"), ok(GOOD_REPLY)])
    with pytest.raises(ProposalFailed, match="HTTP 400") as failed:
        backend(server).complete(PROMPT)
    assert len(server.bodies) == 1
    assert failed.value.permanent


def test_missing_credentials_are_found_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    server = Server([])
    client = anthropic.Anthropic(
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        api_key=None,
        auth_token=None,
        max_retries=0,
    )
    with pytest.raises(BackendUnavailable, match="set ANTHROPIC_API_KEY"):
        AnthropicBackend("claude-opus-4-7", client=client).preflight()
    assert server.bodies == []  # nothing was sent


def test_an_empty_reply_is_quoted_in_the_follow_up_not_sent_empty() -> None:
    server = Server([ok(""), ok(GOOD_REPLY)])
    assert propose(backend(server), PROMPT) == GO_FILE
    assert server.bodies[1]["messages"][1] == {"role": "assistant", "content": "(empty reply)"}


def test_usage_is_read_from_the_stream_and_split_by_cache_ttl() -> None:
    server = Server([ok(GOOD_REPLY, input_tokens=50, output_tokens=900, cache_write=3000,
                        cache_write_1h=3000, cache_read=0)])
    usage = backend(server).complete(PROMPT).usage
    assert (usage.input_tokens, usage.output_tokens) == (50, 900)
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (0, 3000)


def test_one_hour_cache_ttl_is_sent_when_chosen() -> None:
    server = Server([ok(GOOD_REPLY)])
    client = anthropic.Anthropic(
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)), api_key="test",
        max_retries=0)
    AnthropicBackend("claude-opus-4-7", client=client,
                     options=BackendOptions(cache_ttl="1h")).complete(PROMPT)
    assert server.bodies[0]["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert server.bodies[0]["stream"] is True


@pytest.mark.parametrize(
    "model,max_tokens,thinking",
    [
        ("claude-opus-4-7", 64_000, {"type": "adaptive"}),
        ("claude-opus-4-1-20250805", 32_000, {"type": "enabled", "budget_tokens": 16_000}),
        ("claude-3-5-haiku-20241022", 8_192, None),
    ],
)
def test_max_tokens_and_thinking_follow_the_model(
    model: str, max_tokens: int, thinking: dict[str, object] | None
) -> None:
    server = Server([ok(GOOD_REPLY)])
    backend(server, model=model, effort="high").complete(PROMPT)
    body = server.bodies[0]
    assert body["max_tokens"] == max_tokens
    assert body.get("thinking") == thinking
