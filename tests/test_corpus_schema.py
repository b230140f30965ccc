"""One set of format rules, Go's (go/scenario): Python loads a file only after
the Go reader accepted it, and reports Go's finding. These tests hold both
entry points to the same verdicts on the shared files: the examples, the
fixtures of tests/data, the bundled corpus, and the table of broken files
go/scenario's own tests run (go/scenario/testdata/invalid.json)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from routesim_evolve.build.allowlist import CANDCHECK
from routesim_evolve.build.gomodule import build_env, go_binary, go_module_dir
from routesim_evolve.build.tools import GoTool
from routesim_evolve.corpus.check import SCENARIOCHECK, check_files
from routesim_evolve.corpus.commands import corpus_command
from routesim_evolve.corpus.difficulty import MAXFLOW
from routesim_evolve.corpus.generate import graph_json
from routesim_evolve.corpus.importers import import_graph_file
from routesim_evolve.corpus.load import (
    RULE_MODEL_DRIFT,
    CorpusError,
    _parse_accepted,
    clear_graph_cache,
    load_corpus,
    load_graph,
    load_scenario,
)
from routesim_evolve.corpus.schema import Graph, parse_scid
from routesim_evolve.realnet.world import WORLDSTART

REPO = Path(__file__).parents[1]
EXAMPLES = REPO / "docs" / "examples"
EXAMPLE_SCENARIOS = ["base", "drift", "atomic", "attribution"]
INVALID = json.loads((REPO / "go" / "scenario" / "testdata" / "invalid.json").read_text())
DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _fresh_graph_cache() -> Iterator[None]:
    clear_graph_cache()
    yield
    clear_graph_cache()


# ---------------------------------------------------------------------------
# The shared files are accepted


@pytest.mark.parametrize("name", EXAMPLE_SCENARIOS)
def test_doc_examples_load(name: str) -> None:
    loaded = load_scenario(EXAMPLES / f"{name}-example.json")
    assert loaded.graph_path == EXAMPLES / "graph-small.json"
    assert loaded.arena == {"atomic": "atomic_mpp"}.get(name, name)
    assert len(loaded.scenario.payments) == 12
    assert len(loaded.graph.nodes) == 40


def test_bundled_corpus_is_accepted_by_both_entry_points() -> None:
    """load_corpus (Python) and the simulator's reader agree: every file is valid."""
    corpus = load_corpus(REPO / "corpus")
    scenarios = [s for split in corpus.splits.values() for s in split]
    assert len(scenarios) == 48
    verdicts = check_files(sorted(p.path for p in scenarios))
    assert all(v.error is None for v in verdicts)
    graphs = sorted((REPO / "corpus" / "graphs").glob("*.json"))
    assert graphs and all(v.error is None for v in check_files(graphs, graphs=True))


@pytest.mark.parametrize("dump", ["lncli-describegraph.json", "cln-listchannels.json"])
def test_imported_fixtures_are_valid_graphs(tmp_path: Path, dump: str) -> None:
    imported = import_graph_file(DATA / dump).graph
    path = tmp_path / "graph.json"
    path.write_text(graph_json(imported))
    assert load_graph(path) == imported


def test_graph_is_parsed_once_per_process() -> None:
    first = load_scenario(EXAMPLES / "base-example.json")
    second = load_scenario(EXAMPLES / "drift-example.json")
    assert first.graph is second.graph


def test_payment_limits_follow_the_defaults() -> None:
    sc = load_scenario(EXAMPLES / "base-example.json").scenario
    payment = sc.payments[0]
    assert payment.parts(sc.defaults) == 16
    assert payment.attempts(sc.defaults) == 40
    assert payment.fee_limit(sc.defaults) == 10_000 + payment.amount_msat // 100


# ---------------------------------------------------------------------------
# The broken files are refused with Go's finding


def _at(doc: Any, path: list[Any]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _put(doc: Any, path: list[Any], value: Any) -> None:
    parent, key = _at(doc, path[:-1]), path[-1]
    if isinstance(parent, list) and key == len(parent):
        parent.append(value)
    else:
        parent[key] = value


def _apply(doc: Any, edit: dict[str, Any]) -> None:
    """The edits of invalid.json, as go/scenario's writeEdited applies them."""
    if "set" in edit:
        _put(doc, edit["set"], edit["value"])
    elif "delete" in edit:
        del _at(doc, edit["delete"][:-1])[edit["delete"][-1]]
    else:
        _put(doc, edit["to"], _at(doc, edit["copy"]))


def write_case(tmp_path: Path, case: dict[str, Any]) -> dict[str, Path]:
    """The example scenario and its graph, edited as the case says."""
    files = {"scenario": tmp_path / "base-example.json", "graph": tmp_path / "graph-small.json"}
    for kind, path in files.items():
        text = case.get(f"{kind}_text")
        if text is None:
            doc = json.loads((EXAMPLES / path.name).read_text())
            for edit in case.get(kind, []):
                _apply(doc, edit)
            text = json.dumps(doc)
        path.write_text(text)
    return files


@pytest.mark.parametrize("case", INVALID["cases"], ids=[c["name"] for c in INVALID["cases"]])
def test_broken_file_is_refused_with_gos_finding(tmp_path: Path, case: dict[str, Any]) -> None:
    files = write_case(tmp_path, case)
    want = case["want"]
    with pytest.raises(CorpusError) as caught:
        load_scenario(files["scenario"])
    error = caught.value
    assert (error.file, error.field, error.rule) == (
        str(files[want["file"]]), want["field"], want["rule"]
    ), str(error)
    prefix = f"{error.file}: {error.field}: " if error.field else f"{error.file}: "
    assert str(error).startswith(prefix) and error.message, str(error)


def test_every_rule_has_a_broken_file() -> None:
    """The table breaks every rule go/scenario names (read: see the next test)."""
    source = (REPO / "go" / "scenario" / "load.go").read_text()
    rules = set(re.findall(r'Rule\w+\s+= "([a-z-]+)"', source))
    covered = {c["want"]["rule"] for c in INVALID["cases"]}
    assert rules - covered == {"read"}


def test_unreadable_files_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    for load in (load_scenario, load_graph):
        with pytest.raises(CorpusError, match=f"^{missing}: ") as caught:
            load(missing)
        assert caught.value.rule == "read"


def test_a_model_refusing_what_go_accepts_is_reported_as_a_bug() -> None:
    with pytest.raises(CorpusError) as caught:
        _parse_accepted(Graph, str(EXAMPLES / "base-example.json"))
    assert caught.value.rule == RULE_MODEL_DRIFT
    assert "schema.py refuses it" in str(caught.value)


def test_corpus_validate_names_file_and_field(tmp_path: Path) -> None:
    corpus = Path(shutil.copytree(REPO / "corpus", tmp_path / "corpus"))
    broken = sorted((corpus / "val").glob("*.json"))[0]
    body = json.loads(broken.read_text())
    body["payments"][1]["amount_msat"] = -5
    broken.write_text(json.dumps(body))
    result = CliRunner().invoke(corpus_command, ["validate", str(corpus)])
    assert result.exit_code == 2
    assert f"corpus: {broken}: payments[1].amount_msat: want a whole number from 0 to" in (
        result.output
    )


# ---------------------------------------------------------------------------
# The tools' cache keys cover what they are built from


@pytest.mark.parametrize("tool", [CANDCHECK, SCENARIOCHECK, MAXFLOW, WORLDSTART],
                         ids=lambda t: t.name)
def test_tool_key_covers_its_in_module_packages(tool: GoTool) -> None:
    go_dir = go_module_dir()
    module = "github.com/routesim-evolve/routesim"
    out = subprocess.run(
        [go_binary(), "list", "-deps", "-f", "{{.ImportPath}}", "./" + str(tool.main)],
        cwd=go_dir, env=build_env(), capture_output=True, text=True, check=True,
    ).stdout.split()
    in_module = {Path(p.removeprefix(module + "/")) for p in out if p.startswith(module + "/")}
    assert in_module == set(tool.packages)


def test_scid_encoding_matches_lnd() -> None:
    assert parse_scid("700123x45x1") == 700123 << 40 | 45 << 16 | 1
    with pytest.raises(ValueError, match="BLOCKxTXxOUTPUT"):
        parse_scid("16777216x0x0")
