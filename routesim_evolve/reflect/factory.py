"""Build the reflection back-end a `--reflection-lm` value names."""

from __future__ import annotations

import random
import time
from pathlib import Path

import anthropic

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import (
    BackendOptions,
    ReflectionBackend,
    RetryPolicy,
    Sleep,
    UsageMeter,
)
from routesim_evolve.reflect.cli_backend import (
    AgentCLIBackend,
    ClaudeCLIBackend,
    CodexCLIBackend,
)
from routesim_evolve.reflect.compat_backend import CompatibleBackend
from routesim_evolve.reflect.errors import BackendUnavailable
from routesim_evolve.reflect.openai_backend import OpenAIBackend
from routesim_evolve.reflect.spec import DEFAULT_MODELS, LMSpec

__all__ = ["BackendUnavailable", "make_backend", "make_cli_backend"]


def make_backend(
    spec: LMSpec,
    *,
    options: BackendOptions | None = None,
    retry: RetryPolicy | None = None,
    scratch_root: Path | None = None,
    sleep: Sleep = time.sleep,
    rng: random.Random | None = None,
    meter: UsageMeter | None = None,
) -> ReflectionBackend:
    """The back-end for `spec`. Nothing is contacted here: call its
    `preflight` before the run to find a missing key or CLI early."""
    options = options or BackendOptions()
    if spec.kind == "anthropic":
        model = spec.model or DEFAULT_MODELS["anthropic"] or ""
        client = anthropic.Anthropic(max_retries=0, base_url=spec.base_url)
        return AnthropicBackend(model, spec.effort, client=client, options=options, retry=retry,
                                sleep=sleep, rng=rng, meter=meter)
    if spec.kind == "openai":
        model = spec.model or DEFAULT_MODELS["openai"] or ""
        return OpenAIBackend(model, spec.effort, base_url=spec.base_url, options=options,
                             retry=retry, sleep=sleep, rng=rng, meter=meter)
    if spec.kind == "openai-compatible":
        assert spec.model and spec.base_url, "parse_lm_spec requires both"
        return CompatibleBackend(spec.model, spec.base_url, options=options, retry=retry,
                                 sleep=sleep, rng=rng, meter=meter)
    if spec.kind in ("claude", "codex"):
        return make_cli_backend(spec, options=options, retry=retry, scratch_root=scratch_root,
                                sleep=sleep, rng=rng, meter=meter)
    raise BackendUnavailable("the offline proposer has no LM back-end")


def make_cli_backend(
    spec: LMSpec,
    *,
    options: BackendOptions | None = None,
    retry: RetryPolicy | None = None,
    scratch_root: Path | None = None,
    sleep: Sleep = time.sleep,
    rng: random.Random | None = None,
    meter: UsageMeter | None = None,
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
        base_url=spec.base_url,
        options=options,
        scratch_root=scratch_root,
        retry=retry,
        sleep=sleep,
        rng=rng,
        meter=meter,
    )
