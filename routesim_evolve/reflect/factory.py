"""Build the reflection back-end a `--reflection-lm` value names."""

from __future__ import annotations

import random
import time
from pathlib import Path

import openai

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import ReflectionBackend, RetryPolicy, Sleep
from routesim_evolve.reflect.cli_backend import (
    DEFAULT_TIMEOUT_S,
    AgentCLIBackend,
    ClaudeCLIBackend,
    CodexCLIBackend,
)
from routesim_evolve.reflect.openai_backend import OpenAIBackend
from routesim_evolve.reflect.spec import DEFAULT_MODELS, LMSpec


class BackendUnavailable(ValueError):
    """The back-end cannot be set up (offline spec, missing API key)."""


def make_backend(
    spec: LMSpec,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    retry: RetryPolicy | None = None,
    scratch_root: Path | None = None,
    sleep: Sleep = time.sleep,
    rng: random.Random | None = None,
) -> ReflectionBackend:
    """The back-end for `spec`; `timeout` bounds one request or agent run.
    Raises `BackendUnavailable` at start-up rather than failing every
    iteration later."""
    if spec.kind == "anthropic":
        model = spec.model or DEFAULT_MODELS["anthropic"] or ""
        return AnthropicBackend(
            model, spec.effort, request_timeout=timeout, retry=retry, sleep=sleep, rng=rng
        )
    if spec.kind == "openai":
        model = spec.model or DEFAULT_MODELS["openai"] or ""
        try:
            return OpenAIBackend(
                model, spec.effort, request_timeout=timeout, retry=retry, sleep=sleep, rng=rng
            )
        except openai.OpenAIError as err:
            raise BackendUnavailable(f"{spec}: {err}") from err
    if spec.kind in ("claude", "codex"):
        return make_cli_backend(
            spec, timeout=timeout, retry=retry, scratch_root=scratch_root, sleep=sleep, rng=rng
        )
    raise BackendUnavailable("the offline proposer has no LM back-end")


def make_cli_backend(
    spec: LMSpec,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    retry: RetryPolicy | None = None,
    scratch_root: Path | None = None,
    sleep: Sleep = time.sleep,
    rng: random.Random | None = None,
) -> AgentCLIBackend:
    """The agent CLI back-end for a `claude:`/`codex:` spec; it also has
    `propose_in_workdir` for the agentic mode."""
    classes: dict[str, type[AgentCLIBackend]] = {
        "claude": ClaudeCLIBackend,
        "codex": CodexCLIBackend,
    }
    if spec.kind not in classes:
        raise BackendUnavailable(f"{spec} is not an agent CLI")
    return classes[spec.kind](
        spec.model,
        spec.effort,
        timeout=timeout,
        scratch_root=scratch_root,
        retry=retry,
        sleep=sleep,
        rng=rng,
    )
