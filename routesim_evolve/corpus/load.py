"""Load scenario files, graph files and whole corpora, with errors that name the
file, the field and what to do, in the words of the Go reader:

    corpus/train/x.json: payments[3].target: unknown node "02ab…": not in the graph

Validity is decided by the Go reader alone (check.py runs it); this module then
parses the accepted files with the models of schema.py, for Python to read.

A corpus directory holds `train/`, `val/` and `test/` (scenario files), `graphs/`
(the graph files the scenarios name by relative path) and `manifest.json`.
Parsed graphs are cached once per process by path and file version: a corpus
has a few graphs and many scenarios, and parsing a large graph is the
expensive part.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from routesim_evolve.corpus.check import FileVerdict, check_files
from routesim_evolve.corpus.manifest import MANIFEST_FILE, Manifest
from routesim_evolve.corpus.schema import SPLITS, Arena, Graph, Scenario, Split

GRAPHS_DIR: Final = "graphs"

#: The rule of a file Go accepts and a model of schema.py refuses (a bug).
RULE_MODEL_DRIFT: Final = "model-drift"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CorpusError(Exception):
    """A file of the corpus is malformed; the message names the file and field.
    `rule` is the rule broken (go/scenario's Rule* ids)."""

    def __init__(self, file: str, field: str, message: str, rule: str = "") -> None:
        self.file = file
        self.field = field
        self.message = message
        self.rule = rule
        super().__init__(f"{file}: {field}: {message}" if field else f"{file}: {message}")


class LoadedScenario(BaseModel):
    """A validated scenario with the graph it names."""

    model_config = ConfigDict(frozen=True)

    path: Path
    graph_path: Path
    scenario: Scenario
    graph: Graph

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def arena(self) -> Arena:
        return self.scenario.arena  # type: ignore[return-value]  # validated to be an arena


class Corpus(BaseModel):
    """A corpus directory: its manifest and the scenarios of every split."""

    model_config = ConfigDict(frozen=True)

    root: Path
    manifest: Manifest
    splits: dict[Split, list[LoadedScenario]]


# ---------------------------------------------------------------------------
# Errors


def field_path(loc: Sequence[int | str]) -> str:
    """A pydantic error location as Go names fields: ("payments", 3, "target")
    -> "payments[3].target"; map keys that are no identifiers -> '…["700012x5x0"]'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f'["{part}"]'
    return out


def _model_error(file: str, exc: ValidationError) -> CorpusError:
    """A pydantic error on a file: for a manifest, the user's; for a file Go
    accepted, a disagreement between the models and the format."""
    first = exc.errors(include_url=False)[0]
    return CorpusError(file, field_path(first["loc"]), str(first["msg"]))


def _raise_first(verdicts: Iterable[FileVerdict]) -> None:
    for verdict in verdicts:
        if verdict.error is not None:
            e = verdict.error
            raise CorpusError(e.file, e.field, e.message, e.rule)


# ---------------------------------------------------------------------------
# Files

_Model = TypeVar("_Model", Graph, Scenario)
_graph_cache: dict[tuple[Path, int, int], Graph] = {}


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CorpusError(path, "", exc.strerror or str(exc), "read") from exc


def _parse_accepted(model: type[_Model], path: str) -> _Model:
    """Parse a file Go accepted; a refusal here is a bug of schema.py."""
    try:
        return model.model_validate_json(_read(path))
    except ValidationError as exc:
        error = _model_error(path, exc)
        raise CorpusError(
            error.file, error.field,
            f"the Go reader accepts this file but routesim_evolve/corpus/schema.py refuses it "
            f"({error.message}): the models disagree with docs/scenario-format.md, a bug to "
            "report",
            RULE_MODEL_DRIFT,
        ) from None


def _graph_key(path: str) -> tuple[Path, int, int]:
    stat = os.stat(path)
    return Path(path).resolve(), stat.st_mtime_ns, stat.st_size


def _accepted_graph(path: str) -> Graph:
    """The parsed graph of a file Go accepted (cached by path and version)."""
    key = _graph_key(path)
    if key not in _graph_cache:
        _graph_cache[key] = _parse_accepted(Graph, path)
    return _graph_cache[key]


def load_graph(path: str | os.PathLike[str]) -> Graph:
    """Load and validate a graph file."""
    shown = os.fspath(path)
    try:
        key = _graph_key(shown)
    except OSError as exc:
        raise CorpusError(shown, "", exc.strerror or str(exc), "read") from exc
    if key not in _graph_cache:
        _raise_first(check_files([shown], graphs=True))
    return _accepted_graph(shown)


def clear_graph_cache() -> None:
    """Forget the parsed graphs."""
    _graph_cache.clear()


def graph_path_of(scenario_path: str | os.PathLike[str], graph: str) -> str:
    """The graph file a scenario names: relative to the scenario file, cleaned
    lexically as Go's filepath.Join does (so messages name the same path)."""
    if os.path.isabs(graph):
        return os.path.normpath(graph)
    return os.path.normpath(os.path.join(os.path.dirname(os.fspath(scenario_path)), graph))


def scenario_graph_file(scenario_path: str | os.PathLike[str]) -> str:
    """The graph file a scenario file names (graph_path_of), read from the
    file without checking the rest of it: the reference cache keys a result
    by it, and the Ray executor ships it. ValueError when it names none."""
    try:
        doc = json.loads(Path(scenario_path).read_bytes())
    except ValueError:
        doc = None
    graph = doc.get("graph") if isinstance(doc, dict) else None
    if not isinstance(graph, str) or not graph:
        raise ValueError(f"{os.fspath(scenario_path)}: graph: missing")
    return graph_path_of(scenario_path, graph)


def load_scenarios(paths: Sequence[str | os.PathLike[str]]) -> list[LoadedScenario]:
    """Load scenario files and their graphs: validated by Go in one run,
    then parsed. Raises CorpusError for the first invalid file."""
    if not paths:
        return []
    verdicts = check_files(paths)
    _raise_first(verdicts)
    return [
        LoadedScenario(
            path=Path(v.file),
            graph_path=Path(v.graph),
            scenario=_parse_accepted(Scenario, v.file),
            graph=_accepted_graph(v.graph),
        )
        for v in verdicts
    ]


def load_scenario(path: str | os.PathLike[str]) -> LoadedScenario:
    """Load a scenario file and its graph."""
    return load_scenarios([path])[0]


# ---------------------------------------------------------------------------
# Corpora


def scenario_files(corpus_dir: str | os.PathLike[str], split: Split) -> list[Path]:
    """The scenario files of one split, in name order."""
    split_dir = Path(corpus_dir) / split
    if not split_dir.is_dir():
        raise CorpusError(os.fspath(split_dir), "", "no such split directory")
    return sorted(split_dir.glob("*.json"))


def load_split(
    corpus_dir: str | os.PathLike[str],
    split: Split,
    arenas: Iterable[Arena] | None = None,
) -> list[LoadedScenario]:
    """Load the scenarios of one split (optionally only some arenas), in name order."""
    wanted = set(arenas) if arenas is not None else None
    loaded = load_scenarios(scenario_files(corpus_dir, split))
    return [s for s in loaded if wanted is None or s.arena in wanted]


def load_manifest(corpus_dir: str | os.PathLike[str]) -> Manifest:
    """Load `manifest.json` of a corpus directory."""
    shown = os.fspath(Path(corpus_dir) / MANIFEST_FILE)
    try:
        return Manifest.model_validate_json(_read(shown))
    except ValidationError as exc:
        raise _model_error(shown, exc) from None


def load_corpus(corpus_dir: str | os.PathLike[str]) -> Corpus:
    """Load a whole corpus and check that its files are the ones the manifest lists."""
    manifest = load_manifest(corpus_dir)
    splits = {split: load_split(corpus_dir, split) for split in SPLITS}
    for split, scenarios in splits.items():
        _check_split_matches_manifest(corpus_dir, manifest, split, scenarios)
    return Corpus(root=Path(corpus_dir), manifest=manifest, splits=splits)


def _check_split_matches_manifest(
    corpus_dir: str | os.PathLike[str],
    manifest: Manifest,
    split: Split,
    scenarios: list[LoadedScenario],
) -> None:
    listed = sorted(entry.file for entry in manifest.splits[split].scenarios)
    present = sorted(f"{split}/{s.path.name}" for s in scenarios)
    if listed != present:
        missing = sorted(set(listed) - set(present))
        extra = sorted(set(present) - set(listed))
        raise CorpusError(
            os.fspath(Path(corpus_dir) / MANIFEST_FILE),
            f"splits.{split}.scenarios",
            f"does not match the files (missing: {missing}, not listed: {extra})",
        )
