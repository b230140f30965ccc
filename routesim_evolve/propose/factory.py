"""Build the proposers a run rotates through from `--reflection-lm` values.

API back-ends (anthropic, openai, openai-compatible) reflect in a single
call; agent CLIs (claude, codex) edit the file in a work dir and may score
their edit on the minibatch; `offline` turns the candidate's marked knobs.
"""

from __future__ import annotations

from collections.abc import Sequence

from routesim_evolve.propose.agentic import AgenticProposer
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.lm import LMProposer
from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.reflect.base import BackendOptions, ReflectionBackend
from routesim_evolve.reflect.cost import CostLedger
from routesim_evolve.reflect.factory import make_backend, make_cli_backend
from routesim_evolve.reflect.jail import AgentJail
from routesim_evolve.reflect.prompts import PromptPack
from routesim_evolve.reflect.spec import LMSpec


class NamedOffline(OfflineProposer):
    """The offline proposer with the name the rotation shows."""

    name = "offline"


def build_proposer(
    spec: LMSpec,
    pack: PromptPack,
    jail: AgentJail | None = None,
    *,
    seed: int = 0,
    options: BackendOptions | None = None,
    meter: CostLedger | None = None,
) -> Proposer:
    """The proposer one `--reflection-lm` value stands for; an agent runs
    in `jail` (its default hides only the project cache). Nothing is
    contacted: `backend_of(proposer).preflight()` checks it before the run."""
    if spec.kind == "offline":
        return NamedOffline(seed=seed)
    if spec.kind in ("claude", "codex"):
        cli = make_cli_backend(spec, options=options, meter=meter)
        if jail is not None:
            cli.jail = jail
        return AgenticProposer(cli, pack)
    return LMProposer(make_backend(spec, options=options, meter=meter), pack)


def build_proposers(
    specs: Sequence[LMSpec],
    pack: PromptPack,
    jail: AgentJail | None = None,
    *,
    seed: int = 0,
    options: BackendOptions | None = None,
    meter: CostLedger | None = None,
) -> list[Proposer]:
    return [
        build_proposer(s, pack, jail, seed=seed + i, options=options, meter=meter)
        for i, s in enumerate(specs)
    ]


def backend_of(proposer: Proposer) -> ReflectionBackend | None:
    """The LM or agent behind a proposer (None for the offline one)."""
    backend = getattr(proposer, "backend", None)
    return backend if isinstance(backend, ReflectionBackend) else None
