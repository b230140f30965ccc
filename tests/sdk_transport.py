"""The SDK back-ends (Anthropic Messages, OpenAI Responses) on their real
SDK clients, over an in-process HTTP transport: a queue of recorded wire
replies (llm_shapes) answers the requests, and every request body is kept
for the test to read. One `Provider` a back-end, so a behaviour both share
is tested once for each."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
import llm_shapes
import openai

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import APIBackend, BackendOptions, PromptParts, RetryPolicy
from routesim_evolve.reflect.openai_backend import OpenAIBackend
from routesim_evolve.reflect.reply import propose

Reply = httpx2.Response | Exception
Body = dict[str, Any]

# A prompt whose static part is long enough to be cached, and a reply
# carrying a Go file.
GO_FILE = "package main\n\nfunc helper() int { return 1 }\n"
GOOD_REPLY = f"Changes: weight fees less.\n\n```go\n{GO_FILE}```\n"
PROMPT = PromptParts(static="OBJECTIVE AND CONTRACT " * 50, dynamic="CURRENT CANDIDATE + FEEDBACK")


class QueuedServer:
    """Answers each request with the next queued reply (raising it if it is
    an exception) and records request bodies and paths."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.bodies: list[Body] = []
        self.paths: list[str] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.paths.append(request.url.path)
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def event_stream(content: bytes) -> httpx2.Response:
    return httpx2.Response(200, content=content, headers={"content-type": "text/event-stream"})


def fast_retry(tries: int) -> RetryPolicy:
    """Backoff of 1 s, 2 s, 4 s … without jitter, so recorded sleeps are exact."""
    return RetryPolicy(max_tries=tries, base_delay=1.0, max_delay=30.0, jitter=0.0)


def _openai_error(kind: str) -> Body:
    return llm_shapes.openai_error(f"{kind} happened", kind, kind)


def _anthropic_turns(body: Body) -> tuple[Any, list[Body]]:
    return body["system"], body["messages"]


def _responses_turns(body: Body) -> tuple[Any, list[Body]]:
    return body["input"][0], body["input"][1:]


@dataclass(frozen=True)
class Provider:
    """One SDK back-end, the SDK client it drives and the wire shapes its
    API speaks."""

    name: str
    model: str
    backend_type: Callable[..., APIBackend]
    sdk_client: Callable[..., anthropic.Anthropic | openai.OpenAI]
    stream: Callable[..., bytes]
    error_body: Callable[[str], Body]
    rate_limit: str
    # A request body split into its cached static prefix and the
    # conversation after it.
    turns: Callable[[Body], tuple[Any, list[Body]]]

    def ok(self, text: str, **fields: Any) -> httpx2.Response:
        """A streamed reply carrying `text` (fields: usage, status, model)."""
        return event_stream(self.stream(text, **fields))

    def error(
        self, status: int, kind: str, headers: dict[str, str] | None = None
    ) -> httpx2.Response:
        return httpx2.Response(status, json=self.error_body(kind), headers=headers or {})

    def client(self, server: QueuedServer, **credentials: Any) -> Any:
        """The real SDK client with its own retries off, talking to `server`."""
        credentials.setdefault("api_key", "test")
        transport = httpx2.MockTransport(server)
        return self.sdk_client(
            http_client=httpx2.Client(transport=transport), max_retries=0, **credentials
        )

    def backend(
        self,
        server: QueuedServer,
        *,
        model: str | None = None,
        effort: str | None = "high",
        sleeps: list[float] | None = None,
        tries: int = 3,
        options: BackendOptions | None = None,
    ) -> APIBackend:
        """The back-end on `server`; its backoff waits are appended to `sleeps`."""
        recorded = sleeps if sleeps is not None else []
        return self.backend_type(
            model or self.model,
            effort,
            client=self.client(server),
            options=options,
            retry=fast_retry(tries),
            sleep=recorded.append,
        )

    def answer_once(self, **backend_args: Any) -> QueuedServer:
        """The server after the back-end proposed once for PROMPT and got a
        good reply: its one request is in `bodies[0]`."""
        server = QueuedServer([self.ok(GOOD_REPLY)])
        assert propose(self.backend(server, **backend_args), PROMPT) == GO_FILE
        return server


# The two rows of the table: name, default model, back-end, SDK client,
# then the API's wire shapes.
ANTHROPIC = Provider(
    "anthropic", "claude-opus-4-7", AnthropicBackend, anthropic.Anthropic,
    stream=llm_shapes.anthropic_stream, error_body=llm_shapes.anthropic_error,
    rate_limit="rate_limit_error", turns=_anthropic_turns,
)
OPENAI = Provider(
    "openai", "gpt-5.5", OpenAIBackend, openai.OpenAI,
    stream=llm_shapes.responses_stream, error_body=_openai_error,
    rate_limit="rate_limit_exceeded", turns=_responses_turns,
)
PROVIDERS = [ANTHROPIC, OPENAI]
