"""Reflection through the Anthropic Messages API.

The static prompt part is the system block, marked `cache_control:
ephemeral`, so every iteration after the first reads it from the prompt
cache; the per-iteration part is the user turn after it.

Effort: models from Claude Opus/Sonnet 4.6 on take `output_config.effort`
with adaptive thinking; older ones (3.x, 4.0, 4.1, 4.5) get manual extended
thinking with a token budget per level instead.
"""

from __future__ import annotations

import logging
import random
import re
import time
from typing import Any

import anthropic

from routesim_evolve.reflect.base import (
    PromptLike,
    PromptParts,
    Retrying,
    RetryPolicy,
    Sleep,
    as_prompt,
    is_transient_status,
    retry_after_seconds,
)
from routesim_evolve.reflect.errors import ProposalFailed, TransientError

log = logging.getLogger(__name__)

# A whole Go file (a few thousand tokens) plus the model's thinking, which
# counts toward max_tokens.
DEFAULT_MAX_TOKENS = 64_000
DEFAULT_REQUEST_TIMEOUT_S = 900.0

_LEGACY_THINKING = re.compile(
    r"claude-3|claude-(opus|sonnet|haiku)-4-(0|1|5)\b|claude-(opus|sonnet)-4-20\d{6}"
)
THINKING_BUDGETS = {"low": 4_000, "medium": 10_000, "high": 20_000, "xhigh": 32_000, "max": 48_000}


class AnthropicBackend:
    def __init__(
        self,
        model: str,
        effort: str | None = None,
        *,
        client: anthropic.Anthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.name = ":".join(p for p in ("anthropic", model, effort) if p)
        self.model = model
        self.effort = effort
        # Our RetryPolicy does the retrying, so the SDK's own is switched off.
        self._client = client or anthropic.Anthropic(max_retries=0)
        self._max_tokens = max_tokens
        self._timeout = request_timeout
        self._retrying = Retrying(self.name, retry, sleep, rng)

    def complete(self, prompt: PromptLike) -> str:
        parts = as_prompt(prompt)
        return self._retrying.run(lambda: self._call(parts))

    def request(self, prompt: PromptParts) -> dict[str, Any]:
        """The `messages.create` arguments for `prompt`."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self._max_tokens,
            "system": [
                {"type": "text", "text": prompt.static, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": _messages(prompt),
            # An explicit timeout also lifts the SDK's refusal of long
            # non-streaming requests.
            "timeout": self._timeout,
        }
        if self.effort:
            kwargs.update(self._effort_args(self.effort))
        return kwargs

    def _effort_args(self, effort: str) -> dict[str, Any]:
        if _LEGACY_THINKING.search(self.model):
            level = THINKING_BUDGETS.get(effort, THINKING_BUDGETS["high"])
            budget = min(level, self._max_tokens // 2)
            return {"thinking": {"type": "enabled", "budget_tokens": budget}}
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}

    def _call(self, prompt: PromptParts) -> str:
        try:
            message = self._client.messages.create(**self.request(prompt))
        except anthropic.APIConnectionError as err:  # includes APITimeoutError
            raise TransientError(f"{type(err).__name__}: {err}") from err
        except anthropic.APIStatusError as err:
            reason = f"HTTP {err.status_code}: {err.message}"
            if is_transient_status(err.status_code):
                raise TransientError(reason, retry_after=_retry_after(err)) from err
            raise ProposalFailed(f"{self.name}: {reason}") from err
        except (anthropic.AnthropicError, TypeError) as err:
            # TypeError is how the SDK reports missing credentials.
            raise ProposalFailed(f"{self.name}: {type(err).__name__}: {err}") from err
        if message.stop_reason == "max_tokens":
            log.warning("%s: reply cut off at max_tokens=%d", self.name, self._max_tokens)
        return "".join(block.text for block in message.content if block.type == "text")


def _messages(prompt: PromptParts) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt.dynamic}]
    for turn in prompt.follow_ups:
        # The API rejects empty text blocks, and an empty reply is a likely
        # reason for a follow-up.
        messages.append({"role": "assistant", "content": turn.reply.strip() or "(empty reply)"})
        messages.append({"role": "user", "content": turn.request})
    return messages


def _retry_after(err: anthropic.APIStatusError) -> float | None:
    return retry_after_seconds(err.response.headers)
