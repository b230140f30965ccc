"""One list of arenas in each language, and they agree: Python's registry
(corpus/arenas.py) names the arenas and the scenario fields that switch them
on exactly as Go's table does (go/scenario/arenas.go, written to
docs/examples/arenas.json by a Go test), the generator writes those fields,
and the docs' arena table is the registry's."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_corpus
from repo_files import REPO

from routesim_evolve.corpus.arenas import ARENA_TABLE, arena_spec, switched_on
from routesim_evolve.corpus.schema import ARENAS
from routesim_evolve.corpus.settings import ArenaSettings, arena_switched_on

GO_TABLE = json.loads((REPO / "docs" / "examples" / "arenas.json").read_text())["arenas"]


def test_python_and_go_list_the_same_arenas_and_switches():
    assert [(a.name, list(a.switch)) for a in ARENA_TABLE] == [
        (a["name"], a["switch"]) for a in GO_TABLE
    ]
    assert tuple(a["name"] for a in GO_TABLE) == ARENAS


#: Arenas whose switch the common defaults turn on: every arena's receivers
#: hold shards until the whole amount arrived, as real receivers do.
ON_BY_DEFAULT = {"atomic_mpp"}
#: Arenas whose defaults switch another arena's mechanism on too: the atomic
#: arena is where held shards meet traffic moving during the payment.
ALSO_ON = {"atomic_mpp": {"drift"}}


def test_each_arena_is_on_in_its_defaults_and_off_in_the_common_ones():
    for spec in ARENA_TABLE:
        assert arena_switched_on(spec.name, ArenaSettings.model_validate(
            {**ArenaSettings().model_dump(), **spec.defaults}))
        assert arena_switched_on(spec.name, ArenaSettings()) == (
            not spec.switch or spec.name in ON_BY_DEFAULT)


def test_generated_scenarios_switch_on_their_own_arena_only(tmp_path: Path):
    corpus = make_corpus(tmp_path / "all", arenas=",".join(ARENAS))
    files = sorted((corpus / "train").glob("*.json"))
    assert {json.loads(f.read_text())["arena"] for f in files} == set(ARENAS)
    for file in files:
        scenario = json.loads(file.read_text())
        own = scenario["arena"]
        for spec in ARENA_TABLE:
            on = switched_on(spec, scenario)
            want = (not spec.switch or spec.name == own or spec.name in ON_BY_DEFAULT
                    or spec.name in ALSO_ON.get(own, set()))
            assert on == want, (file, spec.name)



def test_the_docs_arena_table_is_the_registry():
    lines = (REPO / "docs" / "scenario-format.md").read_text().splitlines()
    start = lines.index("| arena | switched on by | what it plays |")
    rows = [ln for ln in lines[start + 2:start + 2 + len(ARENA_TABLE) + 1] if ln.startswith("|")]
    assert rows == [spec.doc_row() for spec in ARENA_TABLE]
    assert arena_spec("drift").doc_row().startswith("| `drift` | `traffic.events_per_hour` |")
