"""The Anthropic back-end through the real SDK client, with an HTTP
transport serving the API's recorded streaming shapes: what only this API
does (cache markers, thinking, usage by cache TTL). What it shares with the
other SDK back-ends is in test_reflect_sdk.py."""

from __future__ import annotations

import pytest
from sdk_transport import ANTHROPIC, GO_FILE, GOOD_REPLY, PROMPT, QueuedServer

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import BackendOptions
from routesim_evolve.reflect.errors import BackendUnavailable
from routesim_evolve.reflect.reply import propose
from routesim_evolve.reflect.usage import Usage


def test_request_carries_cache_marker_model_and_effort() -> None:
    body = ANTHROPIC.answer_once().bodies[0]
    assert body["model"] == "claude-opus-4-7"
    assert body["system"] == [
        {"type": "text", "text": PROMPT.static, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": PROMPT.dynamic}]
    assert body["output_config"] == {"effort": "high"}
    assert body["thinking"] == {"type": "adaptive"}
    assert body["max_tokens"] >= 32_000


def test_legacy_model_gets_a_thinking_budget_instead_of_effort() -> None:
    body = ANTHROPIC.answer_once(model="claude-sonnet-4-5", effort="low").bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4_000}
    assert "output_config" not in body


def test_no_effort_sends_no_thinking_config() -> None:
    body = ANTHROPIC.answer_once(effort=None).bodies[0]
    assert "thinking" not in body
    assert "output_config" not in body


def test_missing_credentials_are_found_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    server = QueuedServer([])
    client = ANTHROPIC.client(server, api_key=None, auth_token=None)
    with pytest.raises(BackendUnavailable, match="set ANTHROPIC_API_KEY"):
        AnthropicBackend("claude-opus-4-7", client=client).preflight()
    assert server.bodies == []  # nothing was sent


def test_an_empty_reply_is_quoted_in_the_follow_up_not_sent_empty() -> None:
    server = QueuedServer([ANTHROPIC.ok(""), ANTHROPIC.ok(GOOD_REPLY)])
    assert propose(ANTHROPIC.backend(server), PROMPT) == GO_FILE
    assert server.bodies[1]["messages"][1] == {"role": "assistant", "content": "(empty reply)"}


def test_usage_is_read_from_the_stream_and_split_by_cache_ttl() -> None:
    # On the wire: 4,000 tokens written to the cache, 3,000 of them for an hour.
    sent = Usage(input_tokens=50, output_tokens=900, cache_write_tokens=1000,
                 cache_write_1h_tokens=3000, cache_read_tokens=200)
    reply = ANTHROPIC.ok(GOOD_REPLY, usage=sent)
    usage = ANTHROPIC.backend(QueuedServer([reply])).complete(PROMPT).usage
    assert (usage.input_tokens, usage.output_tokens) == (50, 900)
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (1000, 3000)
    assert usage.cache_read_tokens == 200


def test_one_hour_cache_ttl_is_sent_when_chosen() -> None:
    body = ANTHROPIC.answer_once(effort=None, options=BackendOptions(cache_ttl="1h")).bodies[0]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["stream"] is True


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
    body = ANTHROPIC.answer_once(model=model, effort="high").bodies[0]
    assert body["max_tokens"] == max_tokens
    assert body.get("thinking") == thinking
