"""Reflection through the OpenAI Responses API.

OpenAI caches prompt prefixes on its own; putting the static part first as
the developer message makes that prefix identical across iterations, and a
`prompt_cache_key` derived from it routes the requests to the same cache.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from typing import Any

import openai

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

# Reasoning tokens count toward max_output_tokens, on top of the Go file.
DEFAULT_MAX_OUTPUT_TOKENS = 64_000
DEFAULT_REQUEST_TIMEOUT_S = 900.0


class OpenAIBackend:
    def __init__(
        self,
        model: str,
        effort: str | None = None,
        *,
        client: openai.OpenAI | None = None,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.name = ":".join(p for p in ("openai", model, effort) if p)
        self.model = model
        self.effort = effort
        # Our RetryPolicy does the retrying, so the SDK's own is switched off.
        self._client = client or openai.OpenAI(max_retries=0)
        self._max_output_tokens = max_output_tokens
        self._timeout = request_timeout
        self._retrying = Retrying(self.name, retry, sleep, rng)

    def complete(self, prompt: PromptLike) -> str:
        parts = as_prompt(prompt)
        return self._retrying.run(lambda: self._call(parts))

    def request(self, prompt: PromptParts) -> dict[str, Any]:
        """The `responses.create` arguments for `prompt`."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "input": _input(prompt),
            "max_output_tokens": self._max_output_tokens,
            "prompt_cache_key": cache_key(prompt.static),
            "store": False,
            "timeout": self._timeout,
        }
        if self.effort:
            kwargs["reasoning"] = {"effort": self.effort}
        return kwargs

    def _call(self, prompt: PromptParts) -> str:
        try:
            response = self._client.responses.create(**self.request(prompt))
        except openai.APIConnectionError as err:  # includes APITimeoutError
            raise TransientError(f"{type(err).__name__}: {err}") from err
        except openai.APIStatusError as err:
            reason = f"HTTP {err.status_code}: {err.message}"
            # A 429 for an exhausted quota will not clear by waiting.
            if is_transient_status(err.status_code) and err.code != "insufficient_quota":
                raise TransientError(reason, retry_after=_retry_after(err)) from err
            raise ProposalFailed(f"{self.name}: {reason}") from err
        except openai.OpenAIError as err:
            raise ProposalFailed(f"{self.name}: {type(err).__name__}: {err}") from err
        if response.status == "incomplete":
            log.warning("%s: reply incomplete: %s", self.name, response.incomplete_details)
        return response.output_text


def cache_key(static: str) -> str:
    """A stable key per static prefix, so runs with the same prompt share a cache."""
    return "routesim-" + hashlib.sha256(static.encode()).hexdigest()[:24]


def _input(prompt: PromptParts) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": prompt.static},
        {"role": "user", "content": prompt.dynamic},
    ]
    for turn in prompt.follow_ups:
        items.append({"role": "assistant", "content": turn.reply})
        items.append({"role": "user", "content": turn.request})
    return items


def _retry_after(err: openai.APIStatusError) -> float | None:
    return retry_after_seconds(err.response.headers)
