"""Reflection through the Anthropic Messages API, streamed.

The static prompt part is the system block, marked `cache_control`, so
every iteration after the first reads it from the prompt cache (kept five
minutes, or an hour with `cache_ttl="1h"`); the per-iteration part is the
user turn after it.

Replies are streamed and assembled: a whole Go file plus thinking can take
longer than the SDK allows a non-streaming request, and a stream shows
progress, so the request timeout bounds silence, not the whole reply.

Effort goes only to models that take it (see models.py): adaptive thinking
with `output_config.effort` from Claude Opus/Sonnet 4.6 on, a thinking
budget per level for 3.7 to 4.5, nothing for older models.
"""

from __future__ import annotations

import logging
from typing import Any, Unpack

import anthropic

from routesim_evolve.reflect.base import (
    APIBackend,
    Plumbing,
    PromptParts,
    accepted_effort,
    backend_name,
    is_transient_status,
    retry_after_seconds,
)
from routesim_evolve.reflect.errors import (
    BackendUnavailable,
    ProposalFailed,
    SdkErrors,
    TransientError,
    model_check,
)
from routesim_evolve.reflect.models import anthropic_limits, anthropic_max_tokens
from routesim_evolve.reflect.usage import Completion, Usage

log = logging.getLogger(__name__)

#: How the Anthropic SDK says what a model check found.
ANTHROPIC_ERRORS = SdkErrors(
    anthropic.NotFoundError, anthropic.AuthenticationError, anthropic.AnthropicError
)

THINKING_BUDGETS = {"low": 4_000, "medium": 10_000, "high": 20_000, "xhigh": 32_000, "max": 48_000}


class AnthropicBackend(APIBackend):
    def __init__(
        self,
        model: str,
        effort: str | None = None,
        *,
        client: anthropic.Anthropic | None = None,
        **plumbing: Unpack[Plumbing],
    ) -> None:
        super().__init__(backend_name("anthropic", model, effort), model, **plumbing)
        self.effort = accepted_effort(model, effort, taken=anthropic_limits(model)[1] != "none",
                                      why="this model takes no effort or thinking")
        # Our RetryPolicy does the retrying, so the SDK's own is switched off.
        self._client = client or anthropic.Anthropic(max_retries=0)
        self._max_tokens = anthropic_max_tokens(model, self.options.max_output_tokens)

    def preflight(self) -> None:
        """A key is set and the API knows the model (a free metadata call)."""
        if self._client.api_key is None and self._client.auth_token is None:
            raise BackendUnavailable(
                f"{self.name}: no Anthropic credentials: set ANTHROPIC_API_KEY (or "
                "ANTHROPIC_AUTH_TOKEN), or choose another --reflection-lm"
            )
        with model_check(
            self.name, self.model, "the API", ANTHROPIC_ERRORS,
            name_hint=" (e.g. anthropic:claude-opus-5:high)", key_hint="; check ANTHROPIC_API_KEY",
        ):
            self._client.models.retrieve(self.model, timeout=30.0)

    def request(self, prompt: PromptParts) -> dict[str, Any]:
        """The `messages.stream` arguments for `prompt`."""
        cache: dict[str, str] = {"type": "ephemeral"}
        if self.options.cache_ttl != "5m":
            cache["ttl"] = self.options.cache_ttl
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self._max_tokens,
            "system": [{"type": "text", "text": prompt.static, "cache_control": cache}],
            # The API rejects empty text blocks, and an empty reply is a
            # likely reason for a follow-up.
            "messages": prompt.conversation(empty_reply="(empty reply)"),
            # Streaming: the longest wait between two chunks.
            "timeout": self.options.idle_timeout,
        }
        if self.effort:
            kwargs.update(self._effort_args(self.effort))
        return kwargs

    def _effort_args(self, effort: str) -> dict[str, Any]:
        if anthropic_limits(self.model)[1] == "budget":
            level = THINKING_BUDGETS.get(effort, THINKING_BUDGETS["high"])
            budget = min(level, self._max_tokens // 2)
            return {"thinking": {"type": "enabled", "budget_tokens": budget}}
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}

    def _call(self, prompt: PromptParts) -> Completion:
        try:
            with self._client.messages.stream(**self.request(prompt)) as stream:
                message = stream.get_final_message()
        except anthropic.APIConnectionError as err:  # includes APITimeoutError
            raise TransientError(f"{type(err).__name__}: {err}") from err
        except anthropic.APIStatusError as err:
            reason = f"HTTP {err.status_code}: {err.message}"
            if is_transient_status(err.status_code) or _transient_in_stream(err):
                raise TransientError(reason, retry_after=_retry_after(err)) from err
            raise ProposalFailed(f"{self.name}: {reason}", permanent=True) from err
        except anthropic.AnthropicError as err:
            # A stream cut off mid-reply, an overloaded event inside it.
            raise TransientError(f"{type(err).__name__}: {err}") from err
        if message.stop_reason == "max_tokens":
            log.warning("%s: reply cut off at max_tokens=%d", self.name, self._max_tokens)
        text = "".join(block.text for block in message.content if block.type == "text")
        return Completion(text=text, usage=_usage(message.usage))


def _usage(usage: Any) -> Usage:
    """Anthropic's usage block: input excludes cache reads and writes; the
    writes are split by TTL when the API says so."""
    write_1h = 0
    split = getattr(usage, "cache_creation", None)
    if split is not None:
        write_1h = getattr(split, "ephemeral_1h_input_tokens", 0) or 0
    writes = usage.cache_creation_input_tokens or 0
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_write_tokens=max(0, writes - write_1h),
        cache_write_1h_tokens=write_1h,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
    )


#: Error types an `event: error` inside a stream can carry that a later try
#: may not meet (the API's own words; the stream itself answered HTTP 200).
_TRANSIENT_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error",
                                    "timeout_error"})


def _transient_in_stream(err: anthropic.APIStatusError) -> bool:
    """An error event inside a stream that began with HTTP 200: the SDK
    raises it with the stream's status, so its type decides."""
    body = err.body if isinstance(err.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return err.status_code < 400 and error.get("type") in _TRANSIENT_ERROR_TYPES


def _retry_after(err: anthropic.APIStatusError) -> float | None:
    return retry_after_seconds(err.response.headers)
