"""The acceptance benchmark's journal (bench/acceptance_journal.py): pairs
survive a stop, and pairs judged under other inputs are never mixed in."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "acceptance_journal.py"
_spec = importlib.util.spec_from_file_location("acceptance_journal", _PATH)
assert _spec and _spec.loader
journal_module = importlib.util.module_from_spec(_spec)
sys.modules["acceptance_journal"] = journal_module
_spec.loader.exec_module(journal_module)
Journal = journal_module.Journal
JournalMismatch = journal_module.JournalMismatch
JournalPair = journal_module.JournalPair
JournalStamp = journal_module.JournalStamp


def _stamp(**changes: object) -> JournalStamp:
    fields = dict(scoring_version=3, simulator="s" * 64, corpus="c" * 64,
                  parents={"seed": "a", "planner": "b"}, rules_code="r" * 64,
                  settings={"splits": "3", "ladder": "[0.25, 0.5, 2.0, 4.0]"})
    fields.update(changes)
    return JournalStamp(**fields)


def _pair(name: str, gain: float = 0.01) -> JournalPair:
    return JournalPair(name=name, gain=gain, low=gain - 0.005, high=gain + 0.005,
                       kept={"sequential": 0.5, "GEPA": 1.0}, observations=[8, 16, 128])


def test_pairs_are_read_back_by_a_later_invocation(tmp_path: Path) -> None:
    path = tmp_path / "j" / "journal.jsonl"
    first = Journal(path, _stamp())
    first.record(_pair("seed -> maxHopsx0.5"))
    first.record(_pair("seed <- maxHopsx0.5", -0.01))
    again = Journal(path, _stamp())
    assert again.pairs == first.pairs
    assert again.pairs["seed <- maxHopsx0.5"].gain == -0.01


@pytest.mark.parametrize(("changes", "named"), [
    ({"simulator": "t" * 64}, "simulator"),
    ({"scoring_version": 4}, "scoring_version"),
    ({"rules_code": "q" * 64}, "rules_code"),
    ({"parents": {"seed": "a", "planner": "B"}}, "parent planner"),
    ({"parents": {"seed": "a"}}, "parent planner"),
    ({"settings": {"splits": "4", "ladder": "[0.25, 0.5, 2.0, 4.0]"}}, "setting splits"),
])
def test_a_journal_of_other_inputs_is_refused_naming_what_changed(
        tmp_path: Path, changes: dict[str, object], named: str) -> None:
    path = tmp_path / "journal.jsonl"
    Journal(path, _stamp()).record(_pair("a -> b"))
    with pytest.raises(JournalMismatch, match=named) as caught:
        Journal(path, _stamp(**changes))
    assert "--fresh" in str(caught.value)
    assert len(path.read_text().splitlines()) == 2  # nothing written to it


def test_a_line_cut_short_by_a_stop_is_judged_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, _stamp())
    journal.record(_pair("a -> b"))
    with path.open("a") as f:
        f.write('{"name": "a <- b", "gain": 0.0')  # the stop came mid-line
    again = Journal(path, _stamp())
    assert set(again.pairs) == {"a -> b"}
    again.record(_pair("a <- b", -0.01))  # judged again, on a line of its own
    assert set(Journal(path, _stamp()).pairs) == {"a -> b", "a <- b"}


def test_a_damaged_line_before_the_last_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, _stamp())
    journal.record(_pair("a -> b"))
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "not json", lines[1]]) + "\n")
    with pytest.raises(JournalMismatch, match="line 2"):
        Journal(path, _stamp())


def test_a_stamp_of_another_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(_stamp().model_dump_json()[:-1] + ', "gpu": "none"}\n')
    with pytest.raises(JournalMismatch, match="line 1 is not a journal stamp"):
        Journal(path, _stamp())


def test_a_file_that_is_no_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text('{"name": "a -> b"}\n')
    with pytest.raises(JournalMismatch, match="line 1 is not a journal stamp"):
        Journal(path, _stamp())
