"""Pull the Go candidate out of an LM reply, and check it parses before it
costs an evaluation.

Unlike gepa's default (everything from the first fence to the last), this
takes one fenced block: the one holding `package main`, the longest if
several do. A block without its closing fence is a truncated reply and is
never adopted, nor is prose around the code.
"""

from __future__ import annotations

import functools
import logging
import re
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict

log = logging.getLogger(__name__)

_OPEN_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_PACKAGE_MAIN = re.compile(r"^\s*package\s+main\b", re.MULTILINE)
GOFMT_TIMEOUT_S = 30.0
# Enough of gofmt's report to fix the file; the first error matters most.
MAX_ERROR_LINES = 20


class FencedBlock(BaseModel):
    model_config = ConfigDict(frozen=True)

    info: str
    body: str
    closed: bool


class Extraction(BaseModel):
    """Either `code` (a parsed Go file) or `reason` (why there is none)."""

    model_config = ConfigDict(frozen=True)

    code: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is not None


def fenced_blocks(text: str) -> list[FencedBlock]:
    """Markdown fenced code blocks in `text`, in order; the last one may be
    unclosed when the reply was cut off."""
    lines = text.splitlines()
    blocks: list[FencedBlock] = []
    i = 0
    while i < len(lines):
        m = _OPEN_FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = "\n".join(lines[i + 1 : j]) + "\n"
        blocks.append(FencedBlock(info=m.group("info").strip(), body=body, closed=j < len(lines)))
        i = j + 1
    return blocks


def extract_go(reply: str, *, check_syntax: bool = True) -> Extraction:
    """The Go candidate in `reply`, checked with `gofmt -e` unless told not to."""
    candidates = [b for b in fenced_blocks(reply) if _PACKAGE_MAIN.search(b.body)]
    complete = [b for b in candidates if b.closed]
    if not complete:
        if candidates:
            return Extraction(
                reason="the reply was cut off: the ```go block with `package main` "
                "has no closing fence"
            )
        return Extraction(reason="the reply holds no fenced code block with `package main`")
    code = max(complete, key=lambda b: len(b.body)).body
    if check_syntax:
        error = gofmt_error(code)
        if error:
            return Extraction(reason=f"the Go file does not parse (gofmt -e):\n{error}")
    return Extraction(code=code)


def gofmt_error(code: str) -> str | None:
    """gofmt's syntax errors for `code` (with line:column), or None if it
    parses. Without a gofmt binary the check is skipped, not failed: the
    build step reports the same errors, only later."""
    gofmt = find_gofmt()
    if gofmt is None:
        log.warning("gofmt not found; skipping the syntax check of a proposal")
        return None
    try:
        proc = subprocess.run(
            [gofmt, "-e"], input=code, capture_output=True, text=True, timeout=GOFMT_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        log.warning("gofmt could not run (%s); skipping the syntax check", err)
        return None
    if proc.returncode == 0:
        return None
    text = proc.stderr.replace("<standard input>", "candidate_impl.go")
    # gofmt repeats an error once per parser pass; keep each line once.
    lines = list(dict.fromkeys(line for line in text.splitlines() if line.strip()))
    return "\n".join(lines[:MAX_ERROR_LINES]) or f"gofmt exited with status {proc.returncode}"


@functools.cache
def find_gofmt() -> str | None:
    """gofmt on PATH, else the one in `go env GOROOT`."""
    found = shutil.which("gofmt")
    if found:
        return found
    go = shutil.which("go")
    if go is None:
        return None
    try:
        root = subprocess.run(
            [go, "env", "GOROOT"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    candidate = Path(root) / "bin" / "gofmt"
    return str(candidate) if root and candidate.is_file() else None
