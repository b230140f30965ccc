"""Reflection through the OpenAI Responses API, streamed.

OpenAI caches prompt prefixes on its own; putting the static part first as
the developer message makes that prefix identical across iterations, and a
`prompt_cache_key` derived from it routes the requests to the same cache.
Replies are streamed and assembled, so the request timeout bounds silence,
not the whole reply. `reasoning.effort` goes only to reasoning models.
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Any, Unpack

import openai

from routesim_evolve.reflect.base import (
    APIBackend,
    Plumbing,
    PromptParts,
    accepted_effort,
    backend_name,
)
from routesim_evolve.reflect.errors import BackendUnavailable, ProposalFailed, TransientError
from routesim_evolve.reflect.models import openai_max_tokens, openai_reasons
from routesim_evolve.reflect.openai_errors import api_call, check_model
from routesim_evolve.reflect.usage import Completion, Usage

log = logging.getLogger(__name__)


class OpenAIBackend(APIBackend):
    def __init__(
        self,
        model: str,
        effort: str | None = None,
        *,
        base_url: str | None = None,
        client: openai.OpenAI | None = None,
        **plumbing: Unpack[Plumbing],
    ) -> None:
        super().__init__(backend_name("openai", model, effort), model, **plumbing)
        # Our RetryPolicy does the retrying, so the SDK's own is switched off.
        # A missing key is reported by preflight, not here.
        self._client = client or openai.OpenAI(
            max_retries=0, base_url=base_url, api_key=_env_key_or_placeholder()
        )
        self.effort = accepted_effort(model, effort, taken=openai_reasons(model),
                                      why="not a reasoning model")

    def preflight(self) -> None:
        """A key is set and the API knows the model (a free metadata call)."""
        if self._client.api_key == _MISSING:
            raise BackendUnavailable(
                f"{self.name}: no OpenAI credentials: set OPENAI_API_KEY, or choose "
                "another --reflection-lm"
            )
        check_model(self._client, self.model, self.name, listing=False)

    def request(self, prompt: PromptParts) -> dict[str, Any]:
        """The `responses.stream` arguments for `prompt`."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "input": [{"role": "developer", "content": prompt.static},
                      *prompt.conversation()],
            "max_output_tokens": openai_max_tokens(self.model, self.options.max_output_tokens),
            "prompt_cache_key": cache_key(prompt.static),
            "store": False,
            # Streaming: the longest wait between two events.
            "timeout": self.options.idle_timeout,
        }
        if self.effort:
            kwargs["reasoning"] = {"effort": self.effort}
        return kwargs

    def _call(self, prompt: PromptParts) -> Completion:
        def stream() -> Any:
            with self._client.responses.stream(**self.request(prompt)) as events:
                # A stream may end failed or incomplete instead of completed;
                # the SDK's final response exists for a completed one only.
                for event in events:
                    if event.type in ("response.failed", "response.incomplete"):
                        return event.response
                return events.get_final_response()

        response = api_call(stream, self.name)
        if response.status == "failed":
            raise _failed(response, self.name)
        if response.status == "incomplete":
            # What arrived is kept: a reply cut short holds no whole Go file,
            # and the follow-up asks for one.
            log.warning("%s: reply incomplete: %s", self.name, response.incomplete_details)
        return Completion(text=response.output_text, usage=_usage(response.usage))


#: Codes of a failed response that a later try may not meet.
_TRANSIENT_FAILURES = frozenset({"server_error", "rate_limit_exceeded", "vector_store_timeout"})


def _failed(response: Any, name: str) -> Exception:
    """A failed response as our error: the server's trouble is transient,
    anything else (an invalid prompt, say) permanent."""
    error = response.error
    code = getattr(error, "code", None) or "unknown"
    reason = f"the response failed: {code}: {getattr(error, 'message', '') or 'no message'}"
    if code in _TRANSIENT_FAILURES or code == "unknown":
        return TransientError(reason)
    return ProposalFailed(f"{name}: {reason}", permanent=True)


# The SDK refuses to build a client without a key; a placeholder lets the
# run reach preflight, which says what to set.
_MISSING = "routesim-missing-key"


def _env_key_or_placeholder() -> str:
    return os.environ.get("OPENAI_API_KEY") or _MISSING


def _usage(usage: Any) -> Usage:
    """The Responses usage block: input_tokens includes the cached ones."""
    if usage is None:
        return Usage()
    details = getattr(usage, "input_tokens_details", None)
    return Usage.with_cached_input(usage.input_tokens, getattr(details, "cached_tokens", 0),
                                   usage.output_tokens)


def cache_key(static: str) -> str:
    """A stable key per static prefix, so runs with the same prompt share a cache."""
    return "routesim-" + hashlib.sha256(static.encode()).hexdigest()[:24]
