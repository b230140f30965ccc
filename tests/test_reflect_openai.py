"""The OpenAI back-end through the real SDK client, with an HTTP transport
serving the Responses API's recorded streaming shapes: what only this API
does (developer message first, prompt cache key, reasoning effort, cached
input in usage). What it shares with the other SDK back-ends is in
test_reflect_sdk.py."""

from __future__ import annotations

import pytest
from sdk_transport import GOOD_REPLY, OPENAI, PROMPT, QueuedServer

from routesim_evolve.reflect.errors import BackendUnavailable
from routesim_evolve.reflect.openai_backend import OpenAIBackend, cache_key
from routesim_evolve.reflect.usage import Usage


def test_request_puts_static_first_with_model_effort_and_cache_key() -> None:
    server = OPENAI.answer_once()
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
    assert "reasoning" not in OPENAI.answer_once(effort=None).bodies[0]


def test_usage_counts_cached_input_apart() -> None:
    # On the wire: 5,000 input tokens, of which 4,096 were cached.
    reply = OPENAI.ok(GOOD_REPLY, usage=Usage(input_tokens=904, cache_read_tokens=4096,
                                              output_tokens=700))
    usage = OPENAI.backend(QueuedServer([reply])).complete(PROMPT).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (904, 4096, 700)


def test_a_model_that_does_not_reason_gets_no_effort() -> None:
    assert "reasoning" not in OPENAI.answer_once(model="gpt-4.1", effort="high").bodies[0]


def test_missing_key_is_found_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendUnavailable, match="set OPENAI_API_KEY"):
        OpenAIBackend("gpt-5.5").preflight()
