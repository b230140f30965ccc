"""The reflection proposer: a language model (or agent) rewrites the candidate.

It renders the prompt pack for the parent and its minibatch feedback, asks
the back-end, and returns the Go file the reply holds (checked to parse).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from routesim_evolve.propose.base import PromptedProposer
from routesim_evolve.reflect.base import ReflectionBackend
from routesim_evolve.reflect.prompts import PromptPack
from routesim_evolve.reflect.reply import propose, reply_summary


class LMProposer(PromptedProposer):
    """Single-call reflection: one prompt in, one whole Go file out."""

    def __init__(self, backend: ReflectionBackend, pack: PromptPack) -> None:
        super().__init__(pack)
        self.backend = backend
        self.name = backend.name

    def propose(self, parent: str, feedback: Sequence[Mapping[str, Any]]) -> str | None:
        summary: list[str] = []
        code = propose(self.backend, self.prompt(parent, feedback),
                       on_reply=lambda reply: summary.append(reply_summary(reply)))
        self.remember(summary[0] if summary else "")
        return code
