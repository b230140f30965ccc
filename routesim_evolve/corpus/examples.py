"""Scenarios as the data instances GEPA and the evaluator iterate over.

An example names a scenario file and pins its content (scenario and graph
bytes), so an evaluation cached under it can never be mistaken for one of
an edited file. Reseeded copies are new scenario files the corpus writes:
the same world with other random draws, for revalidation.

    val = load_examples("corpus", "val")
    more = reseeded(val, copies=10, workdir=tmp)   # val + 10 copies of each
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from routesim_evolve.corpus.load import LoadedScenario, graph_path_of, load_scenario, load_split
from routesim_evolve.corpus.schema import Split

#: Reseeded copies differ from the original by this stride in the seed.
RESEED_STRIDE = 1_000_003

#: A reseeded copy is named after its original: "<name>~r<k>".
RESEED_MARK = "~r"


def original_name(name: str) -> str:
    """The scenario a reseeded copy was made from (a name without a copy
    mark is its own original)."""
    head, mark, copy = name.rpartition(RESEED_MARK)
    return head if mark and copy.isdigit() else name


class ScenarioExample(BaseModel):
    """One scenario as a GEPA data instance: where it is and what it is."""

    model_config = ConfigDict(frozen=True)

    split: str
    name: str
    arena: str
    path: Path
    content_hash: str

    @classmethod
    def of(cls, split: str, loaded: LoadedScenario) -> ScenarioExample:
        digest = hashlib.sha256(loaded.path.read_bytes() + loaded.graph_path.read_bytes())
        return cls(
            split=split,
            name=loaded.name,
            arena=loaded.arena,
            path=loaded.path.resolve(),
            content_hash=digest.hexdigest(),
        )


def load_examples(corpus_dir: str | os.PathLike[str], split: Split) -> list[ScenarioExample]:
    """The examples of one split of a corpus, in name order."""
    return [ScenarioExample.of(split, s) for s in load_split(corpus_dir, split)]


def reseeded(
    examples: Sequence[ScenarioExample], copies: int, workdir: Path
) -> list[ScenarioExample]:
    """The examples plus `copies` reseeded copies of each, written under
    workdir (one folder per split) with their graph path made absolute."""
    out = list(examples)
    for ex in examples:
        data = json.loads(ex.path.read_text())
        graph = Path(graph_path_of(ex.path, data["graph"])).resolve()
        for k in range(1, copies + 1):
            copy = dict(data, seed=int(data["seed"]) + k * RESEED_STRIDE, graph=str(graph))
            copy["name"] = f"{data['name']}{RESEED_MARK}{k}"
            path = workdir / ex.split / f"{copy['name']}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(copy))
            out.append(ScenarioExample.of(ex.split, load_scenario(path)))
    return out
