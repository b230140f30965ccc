"""Build the proposers a run rotates through from `--reflection-lm` values."""

from __future__ import annotations

from collections.abc import Sequence

from routesim_evolve.evolve.rotation import Proposer
from routesim_evolve.propose.lm import LMProposer
from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.reflect.anthropic_backend import AnthropicBackend
from routesim_evolve.reflect.openai_backend import OpenAIBackend
from routesim_evolve.reflect.prompts import PromptPack
from routesim_evolve.reflect.spec import LMSpec


class NamedOffline(OfflineProposer):
    """The offline proposer with the name the rotation shows."""

    name = "offline"


def build_proposer(spec: LMSpec, pack: PromptPack, *, seed: int = 0) -> Proposer:
    """The proposer one `--reflection-lm` value stands for."""
    if spec.kind == "offline":
        return NamedOffline(seed=seed)
    if spec.kind == "anthropic":
        return LMProposer(AnthropicBackend(spec.model, spec.effort), pack)
    if spec.kind == "openai":
        return LMProposer(OpenAIBackend(spec.model, spec.effort), pack)
    raise ValueError(f"no proposer for {spec}")


def build_proposers(specs: Sequence[LMSpec], pack: PromptPack, *, seed: int = 0) -> list[Proposer]:
    return [build_proposer(s, pack, seed=seed + i) for i, s in enumerate(specs)]
