"""The reflection proposer: a language model (or agent) rewrites the candidate.

It renders the prompt pack for the parent and its minibatch feedback, asks
the back-end, and returns the Go file the reply holds (checked to parse).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from routesim_evolve.propose.base import Proposer
from routesim_evolve.reflect.base import ReflectionBackend
from routesim_evolve.reflect.prompts import PromptPack, feedback_items
from routesim_evolve.reflect.propose import propose


class LMProposer(Proposer):
    """Single-call reflection: one prompt in, one whole Go file out."""

    def __init__(self, backend: ReflectionBackend, pack: PromptPack) -> None:
        self.backend = backend
        self.pack = pack
        self.name = backend.name
        self._note: str | None = None  # said once, in the next prompt

    def propose(self, parent: str, feedback: Sequence[Mapping[str, Any]]) -> str | None:
        prompt = self.pack.render(parent, feedback_items(feedback), note=self._note)
        self._note = None
        return propose(self.backend, prompt)

    def on_unchanged(self, note: str) -> None:
        self._note = note

    def snapshot(self) -> dict[str, Any]:
        return {"note": self._note}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._note = snapshot["note"]
