"""Load scenario files, graph files and whole corpora, with errors that name the
file and the field as the Go reader does:

    corpus/train/x.json: payments[3].target: unknown node "02ab…"

A corpus directory holds `train/`, `val/` and `test/` (scenario files), `graphs/`
(the graph files the scenarios name by relative path) and `manifest.json`.
Graphs are cached once per process by resolved path: a corpus has a few graphs
and many scenarios, and validating a large graph is the expensive part.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, ValidationError

from routesim_evolve.corpus.manifest import MANIFEST_FILE, Manifest
from routesim_evolve.corpus.schema import (
    RULE_ERROR_TYPE,
    SPLITS,
    Arena,
    Graph,
    Scenario,
    Split,
    graph_context,
    quote,
)

GRAPHS_DIR: Final = "graphs"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CorpusError(Exception):
    """A file of the corpus is malformed; the message names the file and field."""

    def __init__(self, file: str, field: str, message: str) -> None:
        self.file = file
        self.field = field
        self.message = message
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
# Error paths


def field_path(loc: Sequence[int | str]) -> str:
    """Write a pydantic error location the way the Go reader names fields:
    ("payments", 3, "target") -> "payments[3].target"; map keys that are no
    identifiers (scids) -> 'local_balances_msat["700012x5x0"]'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{quote(part)}]"
    return out


def _join_fields(base: str, sub: str) -> str:
    if not base:
        return sub
    if not sub:
        return base
    return base + sub if sub.startswith("[") else f"{base}.{sub}"


_JSON_TYPE_NAMES: Final = {
    "int": "integer", "float": "number", "string": "string", "bool": "boolean",
    "list": "array", "dict": "object", "model": "object", "datetime": "RFC 3339 time",
}


def _describe(error: Any) -> str:
    """Say what is wrong in the Go reader's words where pydantic's differ."""
    kind: str = error["type"]
    if kind == "extra_forbidden":
        return f"unknown field {quote(str(error['loc'][-1]))}"
    if kind == "missing":
        return "missing field"
    base = kind.removesuffix("_type").removesuffix("_parsing")
    if base in _JSON_TYPE_NAMES and base != kind:
        return f"want {_JSON_TYPE_NAMES[base]}, got JSON {_json_kind(error.get('input'))}"
    return str(error["msg"])


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return f"bool {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {quote(value)}"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


def corpus_error(file: str, exc: ValidationError) -> CorpusError:
    """Turn the first pydantic error into a CorpusError naming file and field."""
    first = exc.errors(include_url=False)[0]
    field = field_path(first["loc"])
    if first["type"] == RULE_ERROR_TYPE:
        field = _join_fields(field, first.get("ctx", {}).get("field", ""))
    return CorpusError(file, field, _describe(first))


# ---------------------------------------------------------------------------
# Files

_graph_cache: dict[Path, Graph] = {}


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CorpusError(path, "", exc.strerror or str(exc)) from exc


def load_graph(path: str | os.PathLike[str]) -> Graph:
    """Load and validate a graph file (cached per process by resolved path)."""
    shown = os.fspath(path)
    key = Path(shown).resolve()
    if key not in _graph_cache:
        try:
            _graph_cache[key] = Graph.model_validate_json(_read(shown))
        except ValidationError as exc:
            raise corpus_error(shown, exc) from None
    return _graph_cache[key]


def clear_graph_cache() -> None:
    """Forget the loaded graphs (for tests that rewrite a graph file in place)."""
    _graph_cache.clear()


def graph_path_of(scenario_path: str | os.PathLike[str], graph: str) -> str:
    """The graph file a scenario names: relative to the scenario file, cleaned
    lexically as Go's filepath.Join does (so messages name the same path)."""
    if os.path.isabs(graph):
        return os.path.normpath(graph)
    return os.path.normpath(os.path.join(os.path.dirname(os.fspath(scenario_path)), graph))


def load_scenario(path: str | os.PathLike[str]) -> LoadedScenario:
    """Load a scenario file and its graph, checking the scenario against it."""
    shown = os.fspath(path)
    data = _read(shown)
    # First on its own (as Go decodes the file before it opens the graph), to
    # find the graph; then again with the graph, for the rules that need it.
    alone = _validate_scenario(shown, data, context=None)
    graph_shown = graph_path_of(shown, alone.graph)
    graph = load_graph(graph_shown)
    scenario = _validate_scenario(shown, data, context=graph_context(graph, graph_shown))
    return LoadedScenario(
        path=Path(shown), graph_path=Path(graph_shown), scenario=scenario, graph=graph
    )


def _validate_scenario(shown: str, data: bytes, context: dict[str, Any] | None) -> Scenario:
    try:
        return Scenario.model_validate_json(data, context=context)
    except ValidationError as exc:
        raise corpus_error(shown, exc) from None


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
    loaded = [load_scenario(p) for p in scenario_files(corpus_dir, split)]
    return [s for s in loaded if wanted is None or s.arena in wanted]


def load_manifest(corpus_dir: str | os.PathLike[str]) -> Manifest:
    """Load `manifest.json` of a corpus directory."""
    shown = os.fspath(Path(corpus_dir) / MANIFEST_FILE)
    try:
        return Manifest.model_validate_json(_read(shown))
    except ValidationError as exc:
        raise corpus_error(shown, exc) from None


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
