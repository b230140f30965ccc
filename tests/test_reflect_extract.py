"""Picking the Go candidate out of a reply, and the gofmt syntax check."""

from __future__ import annotations

import pytest

from routesim_evolve.reflect import extract
from routesim_evolve.reflect.extract import extract_go, fenced_blocks

SHORT = "package main\n\nfunc a() {}\n"
LONG = (
    'package main\n\nimport "errors"\n\n'
    'var errX = errors.New("x")\n\nfunc b() error { return errX }\n'
)


def fence(body: str, info: str = "go") -> str:
    return f"```{info}\n{body}```\n"


def test_the_block_with_package_main_is_taken_not_the_prose_or_other_blocks() -> None:
    reply = (
        "Reasoning first.\n\n"
        + fence("x := cost * 2\n")
        + "\nThe whole file:\n\n"
        + fence(SHORT)
        + "\nAnd a test you could add:\n"
        + fence("func TestA(t *testing.T) {}\n")
    )
    assert extract_go(reply).code == SHORT


def test_of_several_files_the_longest_complete_one_wins() -> None:
    reply = fence(SHORT) + "\nor, better:\n" + fence(LONG)
    assert extract_go(reply).code == LONG


def test_a_truncated_block_is_rejected() -> None:
    reply = "Here it is:\n```go\n" + LONG  # cut off before the closing fence
    result = extract_go(reply)
    assert not result.ok
    assert "cut off" in (result.reason or "")


def test_a_truncated_longer_block_does_not_beat_a_complete_one() -> None:
    reply = fence(SHORT) + "\nActually:\n```go\n" + LONG + "// more to come"
    assert extract_go(reply).code == SHORT


def test_no_package_main_is_rejected() -> None:
    result = extract_go(fence("package routing\n\nfunc a() {}\n") + "plus prose")
    assert not result.ok
    assert "package main" in (result.reason or "")


def test_an_unfenced_reply_is_not_adopted_whole() -> None:
    assert not extract_go(LONG).ok


def test_tilde_and_longer_fences_are_understood() -> None:
    reply = "~~~go\n" + SHORT + "~~~\n" + "````go\n" + LONG + "```\nstill inside\n````\n"
    blocks = fenced_blocks(reply)
    assert [b.closed for b in blocks] == [True, True]
    assert blocks[1].body == LONG + "```\nstill inside\n"


def test_a_syntax_error_is_reported_with_its_line() -> None:
    broken = "package main\n\nfunc a() {\n\tx := \n}\n"
    result = extract_go(fence(broken))
    assert not result.ok
    assert "candidate_impl.go:5:1" in (result.reason or "")
    assert "does not parse" in (result.reason or "")


def test_the_syntax_check_can_be_skipped() -> None:
    broken = "package main\n\nfunc a() {\n"
    assert extract_go(fence(broken), check_syntax=False).code == broken


def test_without_gofmt_the_check_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "find_gofmt", lambda: None)
    assert extract_go(fence("package main\nfunc (\n")).ok


def test_gofmt_is_found() -> None:
    assert extract.find_gofmt() is not None
