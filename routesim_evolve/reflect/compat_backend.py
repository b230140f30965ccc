"""Reflection through any OpenAI-compatible Chat Completions server: vLLM,
llama.cpp's server, Ollama, LM Studio, gateways.

`--reflection-lm openai-compatible:MODEL@URL`, e.g.
`openai-compatible:qwen2.5-coder:32b@http://127.0.0.1:11434/v1`. The key,
if the server wants one, comes from OPENAI_COMPATIBLE_API_KEY. Replies are
streamed (with the usage chunk requested) and assembled. No effort or
cache hints are sent: servers differ in what they accept, and an unknown
field can fail every request.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Unpack

import openai

from routesim_evolve.reflect.base import (
    APIBackend,
    Plumbing,
    PromptParts,
)
from routesim_evolve.reflect.models import openai_max_tokens
from routesim_evolve.reflect.openai_errors import api_call, check_model
from routesim_evolve.reflect.usage import Completion, Usage

log = logging.getLogger(__name__)

KEY_VARIABLE = "OPENAI_COMPATIBLE_API_KEY"
# Local servers ignore the key, but the SDK insists on one.
NO_KEY = "not-needed"


class CompatibleBackend(APIBackend):
    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        client: openai.OpenAI | None = None,
        **plumbing: Unpack[Plumbing],
    ) -> None:
        super().__init__(f"openai-compatible:{model}@{base_url}", model, **plumbing)
        self.base_url = base_url
        self._max_tokens = openai_max_tokens(model, self.options.max_output_tokens,
                                             compatible=True)
        self._client = client or openai.OpenAI(
            base_url=base_url, api_key=os.environ.get(KEY_VARIABLE) or NO_KEY, max_retries=0
        )

    def preflight(self) -> None:
        """The server answers and serves the model."""
        check_model(self._client, self.model, self.name, listing=True)

    def request(self, prompt: PromptParts) -> dict[str, Any]:
        """The `chat.completions.create` arguments for `prompt`."""
        return {
            "model": self.model,
            # "system", not "developer": most compatible servers know only the former.
            "messages": [{"role": "system", "content": prompt.static}, *prompt.conversation()],
            "max_tokens": self._max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.options.idle_timeout,
        }

    def _call(self, prompt: PromptParts) -> Completion:
        def stream() -> Completion:
            text: list[str] = []
            usage = Usage()
            finish = None
            for chunk in self._client.chat.completions.create(**self.request(prompt)):
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices:
                    if choice.delta and choice.delta.content:
                        text.append(choice.delta.content)
                    finish = choice.finish_reason or finish
            if finish == "length":
                log.warning("%s: reply cut off at max_tokens=%d", self.name, self._max_tokens)
            return Completion(text="".join(text), usage=usage)

        return api_call(stream, self.name)


def _usage(usage: Any) -> Usage:
    """Chat Completions usage: prompt_tokens includes the cached ones."""
    details = getattr(usage, "prompt_tokens_details", None)
    return Usage.with_cached_input(usage.prompt_tokens, getattr(details, "cached_tokens", 0),
                                   usage.completion_tokens)
