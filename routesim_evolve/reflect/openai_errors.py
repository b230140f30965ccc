"""How both OpenAI-SDK back-ends (the Responses API and Chat Completions
servers) classify failures and check a model before the run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import openai

from routesim_evolve.reflect.base import is_transient_status, retry_after_seconds
from routesim_evolve.reflect.errors import (
    BackendUnavailable,
    ProposalFailed,
    SdkErrors,
    TransientError,
    model_check,
)

T = TypeVar("T")

#: How the OpenAI SDK says what a model check found.
OPENAI_ERRORS = SdkErrors(openai.NotFoundError, openai.AuthenticationError, openai.OpenAIError)


def api_call(call: Callable[[], T], name: str) -> T:
    """`call`, with the SDK's errors as ours: connection trouble, timeouts,
    rate limits and server errors are transient; the rest is permanent."""
    try:
        return call()
    except openai.APIConnectionError as err:  # includes APITimeoutError
        raise TransientError(f"{type(err).__name__}: {err}") from err
    except openai.APIStatusError as err:
        reason = f"HTTP {err.status_code}: {err.message}"
        # A 429 for an exhausted quota will not clear by waiting.
        if is_transient_status(err.status_code) and err.code != "insufficient_quota":
            raise TransientError(
                reason, retry_after=retry_after_seconds(err.response.headers)
            ) from err
        raise ProposalFailed(f"{name}: {reason}", permanent=True) from err
    except openai.OpenAIError as err:
        # A stream cut off mid-reply.
        raise TransientError(f"{type(err).__name__}: {err}") from err


def check_model(client: openai.OpenAI, model: str, name: str, *, listing: bool) -> None:
    """The server answers and knows `model`: `models.retrieve` on OpenAI;
    `models.list` on compatible servers, which often do not serve single
    models (then an unlisted model is only refused if the list is not empty
    and lacks it), and a one-token request to the model where the server has
    no list at all (404)."""
    where = f"the API at {client.base_url}"
    with model_check(name, model, where, OPENAI_ERRORS):
        if listing:
            try:
                ids = [m.id for m in client.models.list(timeout=30.0)]
            except openai.NotFoundError:
                # Several gateways and older llama.cpp builds serve no model
                # list: ask the model itself for one token instead.
                client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": "Say OK."}],
                    max_tokens=1, timeout=60.0)
                return
            if ids and model not in ids:
                raise BackendUnavailable(
                    f"{name}: the server at {client.base_url} does not serve {model!r}; "
                    f"it serves: {', '.join(ids[:10])}"
                )
        else:
            client.models.retrieve(model, timeout=30.0)
