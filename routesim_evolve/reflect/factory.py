"""Build the reflection back-end a `--reflection-lm` value names."""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

import anthropic

from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.base import Plumbing, ReflectionBackend
from routesim_evolve.reflect.cli_backend import AGENT_CLIS, AgentCLIBackend
from routesim_evolve.reflect.compat_backend import CompatibleBackend
from routesim_evolve.reflect.errors import BackendUnavailable
from routesim_evolve.reflect.openai_backend import OpenAIBackend
from routesim_evolve.reflect.spec import DEFAULT_MODELS, LMSpec

__all__ = ["BackendUnavailable", "make_backend", "make_cli_backend"]


def make_backend(
    spec: LMSpec, *, scratch_root: Path | None = None, **plumbing: Unpack[Plumbing]
) -> ReflectionBackend:
    """The back-end for `spec`. Nothing is contacted here: call its
    `preflight` before the run to find a missing key or CLI early."""
    if spec.kind == "anthropic":
        model = spec.model or DEFAULT_MODELS["anthropic"] or ""
        client = anthropic.Anthropic(max_retries=0, base_url=spec.base_url)
        return AnthropicBackend(model, spec.effort, client=client, **plumbing)
    if spec.kind == "openai":
        model = spec.model or DEFAULT_MODELS["openai"] or ""
        return OpenAIBackend(model, spec.effort, base_url=spec.base_url, **plumbing)
    if spec.kind == "openai-compatible":
        assert spec.model and spec.base_url, "parse_lm_spec requires both"
        return CompatibleBackend(spec.model, spec.base_url, **plumbing)
    if spec.kind in AGENT_CLIS:
        return make_cli_backend(spec, scratch_root=scratch_root, **plumbing)
    raise BackendUnavailable("the offline proposer has no LM back-end")


def make_cli_backend(
    spec: LMSpec, *, scratch_root: Path | None = None, **plumbing: Unpack[Plumbing]
) -> AgentCLIBackend:
    """The agent CLI back-end for a `claude:`/`codex:` spec; it also has
    `propose_in_workdir` for the agentic mode."""
    if spec.kind not in AGENT_CLIS:
        raise BackendUnavailable(f"{spec} is not an agent CLI")
    return AGENT_CLIS[spec.kind](
        spec.model, spec.effort, base_url=spec.base_url, scratch_root=scratch_root, **plumbing
    )
