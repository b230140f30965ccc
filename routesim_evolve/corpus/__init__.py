"""The corpus: scenario and graph files (docs/scenario-format.md), their loader,
the manifest that stamps what a corpus contains, and the generator that makes
corpora from calibrated synthetic topologies or imported real graphs.

What the evaluator calls:

    corpus = load_corpus("corpus")            # manifest + every split, cross-checked
    val = load_split("corpus", "val")         # list[LoadedScenario], name order
    val_drift = load_split("corpus", "val", arenas=["drift"])
    manifest = load_manifest("corpus")        # Manifest
    one = load_scenario("corpus/val/base-001.json")   # LoadedScenario(path, graph_path,
                                                      #   scenario, graph)

Malformed files raise `CorpusError` naming the file and field, e.g.
`corpus/train/x.json: payments[3].target: unknown node "02ab…"`.
"""

from routesim_evolve.corpus.generate import GenerationError, generate_corpus
from routesim_evolve.corpus.load import (
    Corpus,
    CorpusError,
    LoadedScenario,
    load_corpus,
    load_graph,
    load_manifest,
    load_scenario,
    load_split,
)
from routesim_evolve.corpus.manifest import ArenaRates, Manifest
from routesim_evolve.corpus.schema import (
    ARENAS,
    SPLITS,
    Arena,
    Graph,
    Payment,
    Scenario,
    Split,
)
from routesim_evolve.corpus.settings import GeneratorSettings

__all__ = [
    "ARENAS",
    "SPLITS",
    "Arena",
    "ArenaRates",
    "Corpus",
    "CorpusError",
    "GenerationError",
    "GeneratorSettings",
    "Graph",
    "LoadedScenario",
    "Manifest",
    "Payment",
    "Scenario",
    "Split",
    "generate_corpus",
    "load_corpus",
    "load_graph",
    "load_manifest",
    "load_scenario",
    "load_split",
]
