"""Building back-ends from specs; the shared interface and prompt shape."""

from __future__ import annotations

import random

import pytest

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import (
    PromptParts,
    ReflectionBackend,
    RetryPolicy,
    retry_after_seconds,
)
from routesim_evolve.reflect.cli_backend import ClaudeCLIBackend, CodexCLIBackend
from routesim_evolve.reflect.compat_backend import CompatibleBackend
from routesim_evolve.reflect.errors import ProposalFailed
from routesim_evolve.reflect.factory import BackendUnavailable, make_backend
from routesim_evolve.reflect.openai_backend import OpenAIBackend
from routesim_evolve.reflect.reply import propose
from routesim_evolve.reflect.spec import parse_lm_spec
from routesim_evolve.reflect.usage import Completion


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.mark.parametrize(
    "value,cls,name",
    [
        ("anthropic:claude-opus-4-7:high", AnthropicBackend, "anthropic:claude-opus-4-7:high"),
        ("openai:gpt-5.5:low", OpenAIBackend, "openai:gpt-5.5:low"),
        ("claude:opus:max", ClaudeCLIBackend, "claude:opus:max"),
        ("codex", CodexCLIBackend, "codex"),
        ("openai-compatible:qwen2.5-coder:32b@http://127.0.0.1:11434/v1", CompatibleBackend,
         "openai-compatible:qwen2.5-coder:32b@http://127.0.0.1:11434/v1"),
    ],
)
def test_make_backend(value: str, cls: type, name: str) -> None:
    backend = make_backend(parse_lm_spec(value))
    assert isinstance(backend, cls)
    assert isinstance(backend, ReflectionBackend)
    assert backend.name == name


def test_offline_has_no_backend() -> None:
    with pytest.raises(BackendUnavailable, match="offline"):
        make_backend(parse_lm_spec("offline"))


@pytest.mark.parametrize(
    "value,variable,message",
    [
        ("openai:gpt-5.5", "OPENAI_API_KEY", r"openai:gpt-5\.5: no OpenAI credentials: set "),
        ("anthropic", "ANTHROPIC_API_KEY", r"no Anthropic credentials: set ANTHROPIC_API_KEY"),
    ],
)
def test_missing_key_is_reported_by_preflight_before_any_request(
    monkeypatch: pytest.MonkeyPatch, value: str, variable: str, message: str
) -> None:
    monkeypatch.delenv(variable)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(BackendUnavailable, match=message):
        make_backend(parse_lm_spec(value)).preflight()


def test_an_unreachable_compatible_server_is_reported_by_preflight() -> None:
    backend = make_backend(parse_lm_spec("openai-compatible:m@http://127.0.0.1:9/v1"))
    with pytest.raises(BackendUnavailable, match=r"cannot reach the API at http://127\.0\.0\.1:9/v1"):
        backend.preflight()


class Scripted:
    """A back-end that answers from a list and records the prompts."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[PromptParts] = []

    def preflight(self) -> None:
        pass

    def complete(self, prompt: PromptParts) -> Completion:  # type: ignore[override]
        self.prompts.append(prompt)
        return Completion(text=self.replies.pop(0))


def test_propose_returns_the_replys_go_file() -> None:
    backend = Scripted(["```go\npackage main\n```\n"])
    assert propose(backend, PromptParts(static="S", dynamic="D")) == "package main\n"
    assert backend.prompts[0] == PromptParts(static="S", dynamic="D")


def test_propose_fails_without_calling_a_third_time() -> None:
    backend = Scripted(["prose", "more prose", "```go\npackage main\n```\n"])
    with pytest.raises(ProposalFailed, match="scripted: no usable Go file after a follow-up"):
        propose(backend, PromptParts(static="S", dynamic="D"))
    assert len(backend.replies) == 1


def test_flat_prompt_keeps_static_first_and_appends_follow_ups() -> None:
    prompt = PromptParts(static="S", dynamic="D").with_follow_up("R", "Q")
    assert prompt.flat() == "S\n\nD\n\n## Your previous reply\n\nR\n\n## Follow-up\n\nQ\n"


def test_backoff_grows_exponentially_within_its_cap_and_jitter() -> None:
    policy = RetryPolicy(base_delay=2.0, max_delay=10.0, jitter=0.5)
    rng = random.Random(7)
    for attempt, ceiling in enumerate([2.0, 4.0, 8.0, 10.0, 10.0]):
        delay = policy.delay(attempt, rng)
        assert ceiling / 2 <= delay <= ceiling


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds(None) is None


def test_a_compatible_server_without_a_model_list_is_asked_for_one_token() -> None:
    from fake_llm_server import Answer, FakeLLMServer
    from llm_shapes import openai_error

    def reply(request):  # the server knows one model
        if request.body.get("model") == "served":
            return Answer(text="OK")
        return Answer(status=404, error=openai_error("model not found", "invalid_request_error",
                                                     "model_not_found"))

    with FakeLLMServer(reply, model_list=False) as server:
        make_backend(parse_lm_spec(f"openai-compatible:served@{server.url}/v1")).preflight()
        asked = server.posts("/chat/completions")
        assert len(asked) == 1 and asked[0].body["max_tokens"] == 1
        unknown = make_backend(parse_lm_spec(f"openai-compatible:other@{server.url}/v1"))
        with pytest.raises(BackendUnavailable, match="does not know model 'other'"):
            unknown.preflight()


@pytest.mark.parametrize(("value", "field", "tokens"), [
    ("openai:gpt-4o", "max_output_tokens", 16_384),
    ("openai:gpt-4.1-mini", "max_output_tokens", 32_768),
    ("openai:gpt-5.5", "max_output_tokens", 64_000),
    ("openai:some-new-model", "max_output_tokens", 16_384),
    ("openai-compatible:qwen2.5-coder:32b@http://127.0.0.1:9/v1", "max_tokens", 8_192),
    ("openai-compatible:gpt-4o@http://127.0.0.1:9/v1", "max_tokens", 16_384),
])
def test_output_tokens_follow_the_models_limit(value: str, field: str, tokens: int) -> None:
    backend = make_backend(parse_lm_spec(value))
    assert backend.request(PromptParts(static="s", dynamic="d"))[field] == tokens
