"""Find and rewrite the marked tunables of a candidate's Go source.

A candidate marks what the offline proposer may change, on the line itself:

    minShardMsat = 10_000_000 // evolve:tunable [1_000_000, 100_000_000] retry
    splitRule = "halving" // evolve:choice halving|capacity|probability success

- `evolve:tunable` marks a numeric literal (int or float). An optional
  `[lo, hi]` bounds it (default: a factor of 10 either way from the seed
  value, never crossing zero).
- `evolve:choice a|b|c` marks a string literal that picks among strategy
  blocks the code switches on.
- A trailing word names the score axis the knob mostly moves (`success`,
  `retry` or `fee`); the proposer turns the knobs of the weakest axis first.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

Axis = Literal["success", "retry_efficiency", "time_efficiency", "fee_efficiency"]

_AXIS_WORDS: dict[str, Axis] = {
    "success": "success",
    "retry": "retry_efficiency",
    "time": "time_efficiency",
    "fee": "fee_efficiency",
}

_NUMBER = r"-?(?:\d[\d_]*)(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?"
# A declaration's name: after `const` or `var` when the line has one (a
# one-line `const name = …`), else its first word (inside a block).
_NAME = r"(?:(?:const|var)\s+)?(?P<name>\w+)"
_TUNABLE = re.compile(
    rf"^(?P<head>\s*{_NAME}\s*(?:\w[\w.]*\s*)?=\s*)(?P<value>{_NUMBER})"
    rf"(?P<mid>\s*//\s*evolve:tunable)(?P<tail>.*)$"
)
_CHOICE = re.compile(
    rf'^(?P<head>\s*{_NAME}\s*(?:\w[\w.]*\s*)?=\s*)"(?P<value>[^"]*)"'
    r"(?P<mid>\s*//\s*evolve:choice\s+)(?P<options>[\w|.-]+)(?P<tail>.*)$"
)
_BOUNDS = re.compile(rf"\[\s*(?P<lo>{_NUMBER})\s*,\s*(?P<hi>{_NUMBER})\s*\]")


class Tunable(BaseModel):
    """One marked knob of a candidate."""

    name: str
    line: int  # 0-based line index in the source
    kind: Literal["number", "choice"]
    value: float | str
    is_int: bool = False
    low: float | None = None
    high: float | None = None
    options: list[str] = []
    axis: Axis | None = None

    def clamp(self, value: float) -> float:
        """value within the knob's bounds (a missing bound does not bind)."""
        if self.low is not None:
            value = max(value, self.low)
        if self.high is not None:
            value = min(value, self.high)
        return value


def find_tunables(source: str) -> list[Tunable]:
    """Every marked knob of the source, in file order."""
    found = []
    for i, line in enumerate(source.splitlines()):
        if m := _TUNABLE.match(line):
            found.append(_number_tunable(i, m))
        elif m := _CHOICE.match(line):
            found.append(
                Tunable(
                    name=m["name"],
                    line=i,
                    kind="choice",
                    value=m["value"],
                    options=m["options"].split("|"),
                    axis=_axis_of(m["tail"]),
                )
            )
    return found


def _number_tunable(line: int, m: re.Match[str]) -> Tunable:
    text = m["value"]
    is_int = not any(c in text for c in ".eE")
    value = float(text.replace("_", ""))
    low, high = _default_bounds(value)
    if b := _BOUNDS.search(m["tail"]):
        low, high = float(b["lo"].replace("_", "")), float(b["hi"].replace("_", ""))
    return Tunable(
        name=m["name"],
        line=line,
        kind="number",
        value=value,
        is_int=is_int,
        low=min(low, high),
        high=max(low, high),
        axis=_axis_of(m["tail"]),
    )


def _default_bounds(value: float) -> tuple[float, float]:
    if value == 0:
        return 0.0, 1.0
    a, b = value / 10, value * 10
    return min(a, b), max(a, b)


def _axis_of(tail: str) -> Axis | None:
    for word in re.findall(r"[a-z]+", _BOUNDS.sub("", tail)):
        if word in _AXIS_WORDS:
            return _AXIS_WORDS[word]
    return None


def set_value(source: str, tunable: Tunable, value: float | str) -> str:
    """The source with one knob set to value (formatted as Go wants it)."""
    lines = source.splitlines(keepends=True)
    line = lines[tunable.line]
    end = line[len(line.rstrip("\r\n")) :]
    body = line[: len(line) - len(end)]
    pattern = _TUNABLE if tunable.kind == "number" else _CHOICE
    m = pattern.match(body)
    if m is None or m["name"] != tunable.name:
        raise ValueError(f"line {tunable.line + 1} no longer holds tunable {tunable.name}")
    literal = _go_literal(value, tunable) if tunable.kind == "number" else f'"{value}"'
    lines[tunable.line] = body[: m.start("value") - (tunable.kind == "choice")] + literal + (
        body[m.end("value") + (tunable.kind == "choice") :]
    ) + end
    return "".join(lines)


def _go_literal(value: float | str, tunable: Tunable) -> str:
    number = float(value)
    if tunable.is_int:
        return str(round(number))
    text = f"{number:.6g}"
    return text if any(c in text for c in ".e") else text + ".0"
