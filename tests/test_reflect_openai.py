"""The OpenAI back-end through the real SDK client, with an HTTP transport
serving the Responses API's recorded streaming shapes."""

from __future__ import annotations

import json

import httpx2
import llm_shapes
import openai
import pytest

from routesim_evolve.reflect.base import PromptParts, RetryPolicy
from routesim_evolve.reflect.errors import BackendUnavailable, ProposalFailed
from routesim_evolve.reflect.openai_backend import OpenAIBackend, cache_key
from routesim_evolve.reflect.propose import propose

GO_FILE = "package main\n\nfunc helper() int { return 1 }\n"
GOOD_REPLY = f"Changes: weight fees less.\n\n```go\n{GO_FILE}```\n"
PROMPT = PromptParts(static="OBJECTIVE AND CONTRACT " * 50, dynamic="CURRENT CANDIDATE + FEEDBACK")

Reply = httpx2.Response | Exception


def ok(text: str, status: str = "completed", **usage: int) -> httpx2.Response:
    return httpx2.Response(200, content=llm_shapes.responses_stream(text, status=status, **usage),
                           headers={"content-type": "text/event-stream"})


def error(status: int, code: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    body = llm_shapes.openai_error(f"{code} happened", code, code)
    return httpx2.Response(status, json=body, headers=headers or {})


class Server:
    """Answers each request with the next queued reply and records bodies."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, object]] = []
        self.paths: list[str] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.paths.append(request.url.path)
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def backend(
    server: Server,
    *,
    model: str = "gpt-5.5",
    effort: str | None = "high",
    sleeps: list[float] | None = None,
    tries: int = 3,
) -> OpenAIBackend:
    client = openai.OpenAI(
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        api_key="test",
        max_retries=0,
    )
    recorded = sleeps if sleeps is not None else []
    return OpenAIBackend(
        model,
        effort,
        client=client,
        retry=RetryPolicy(max_tries=tries, base_delay=1.0, max_delay=30.0, jitter=0.0),
        sleep=recorded.append,
    )


def test_request_puts_static_first_with_model_effort_and_cache_key() -> None:
    server = Server([ok(GOOD_REPLY)])
    assert propose(backend(server), PROMPT) == GO_FILE
    body = server.bodies[0]
    assert server.paths == ["/v1/responses"]
    assert body["model"] == "gpt-5.5"
    assert body["reasoning"] == {"effort": "high"}
    assert body["input"] == [
        {"role": "developer", "content": PROMPT.static},
        {"role": "user", "content": PROMPT.dynamic},
    ]
    assert body["prompt_cache_key"] == cache_key(PROMPT.static)
    assert body["store"] is False
    assert body["stream"] is True


def test_no_effort_sends_no_reasoning_config() -> None:
    server = Server([ok(GOOD_REPLY)])
    backend(server, effort=None).complete(PROMPT)
    assert "reasoning" not in server.bodies[0]


def test_garbage_reply_is_retried_once_with_a_follow_up() -> None:
    server = Server([ok("Lower the fee weight."), ok(GOOD_REPLY)])
    assert propose(backend(server), PROMPT) == GO_FILE
    items = server.bodies[1]["input"]
    assert isinstance(items, list) and len(items) == 4
    assert items[0] == {"role": "developer", "content": PROMPT.static}
    assert items[2] == {"role": "assistant", "content": "Lower the fee weight."}
    assert "```go" in items[3]["content"]


def test_garbage_twice_raises_proposal_failed() -> None:
    server = Server([ok("nothing"), ok("```python\nprint('hi')\n```\n")])
    with pytest.raises(ProposalFailed, match="package main"):
        propose(backend(server), PROMPT)
    assert len(server.bodies) == 2


def test_timeout_and_rate_limit_are_retried_with_backoff() -> None:
    sleeps: list[float] = []
    server = Server(
        [httpx2.ReadTimeout("timed out"), error(429, "rate_limit_exceeded"), ok(GOOD_REPLY)]
    )
    assert propose(backend(server, sleeps=sleeps), PROMPT) == GO_FILE
    assert len(server.bodies) == 3
    assert sleeps == [1.0, 2.0]


def test_retry_after_header_stretches_the_wait() -> None:
    sleeps: list[float] = []
    server = Server([error(503, "server_error", {"retry-after-ms": "4500"}), ok(GOOD_REPLY)])
    backend(server, sleeps=sleeps).complete(PROMPT)
    assert sleeps == [4.5]


def test_exhausted_quota_is_not_retried() -> None:
    server = Server([error(429, "insufficient_quota"), ok(GOOD_REPLY)])
    with pytest.raises(ProposalFailed, match="HTTP 429") as failed:
        backend(server).complete(PROMPT)
    assert len(server.bodies) == 1
    assert failed.value.permanent


def test_persistent_timeouts_give_up_with_proposal_failed() -> None:
    server = Server([httpx2.ReadTimeout("timed out")] * 3)
    with pytest.raises(ProposalFailed, match="gave up after 3 tries"):
        backend(server).complete(PROMPT)


def test_usage_counts_cached_input_apart() -> None:
    server = Server([ok(GOOD_REPLY, input_tokens=5000, cached_tokens=4096, output_tokens=700)])
    usage = backend(server).complete(PROMPT).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (904, 4096, 700)


def test_a_model_that_does_not_reason_gets_no_effort() -> None:
    server = Server([ok(GOOD_REPLY)])
    backend(server, model="gpt-4.1", effort="high").complete(PROMPT)
    assert "reasoning" not in server.bodies[0]


def test_missing_key_is_found_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendUnavailable, match="set OPENAI_API_KEY"):
        OpenAIBackend("gpt-5.5").preflight()
