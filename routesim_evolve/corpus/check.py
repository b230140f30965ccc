"""The format's rules, applied by the Go reader the simulator uses.

go/scenario is the one implementation of the rules of docs/scenario-format.md;
its command scenariocheck prints a verdict per file as JSON, and this module
runs it (built once per source hash into the cache folder, like candcheck).
Python never judges a file itself: `load.py` asks here first, then parses
what Go accepted with the models of `schema.py`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, ValidationError

from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.build.tools import GoTool, run_tool

#: scenariocheck and the packages it is built from.
SCENARIOCHECK = GoTool(
    name="scenariocheck",
    main=Path("cmd/scenariocheck"),
    packages=(Path("cmd/scenariocheck"), Path("cmd/internal/checkcmd"), Path("scenario")),
)

#: Files per scenariocheck run (keeps the command line short).
_BATCH: Final = 400


class Finding(BaseModel):
    """The first problem of a file: where, which rule (a stable id of
    go/scenario's Rule* constants), and what to do, in Go's words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    field: str
    rule: str
    message: str


class FileVerdict(BaseModel):
    """scenariocheck's verdict on one file; `graph` is the graph file a valid
    scenario names (as Go resolved it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    graph: str = ""
    error: Finding | None


class CheckReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    files: list[FileVerdict]


def check_files(
    paths: Sequence[str | os.PathLike[str]], *, graphs: bool = False
) -> list[FileVerdict]:
    """Go's verdict on scenario files (each with its graph), or on graph files
    when `graphs`, in the order given. Raises GoToolchainError when the tool
    cannot be built or run; a bad file never raises."""
    verdicts: list[FileVerdict] = []
    names = [os.fspath(p) for p in paths]
    for start in range(0, len(names), _BATCH):
        batch = names[start:start + _BATCH]
        args = [*(["-graph"] if graphs else []), "--", *batch]
        proc = run_tool(SCENARIOCHECK, args, timeout=600)
        if proc.returncode not in (0, 1):
            raise GoToolchainError(
                f"scenariocheck exited {proc.returncode}: {proc.stderr.decode()}"
            )
        try:
            report = CheckReport.model_validate_json(proc.stdout)
        except ValidationError as exc:
            raise GoToolchainError(f"scenariocheck printed an unreadable report: {exc}") from exc
        verdicts += report.files
    return verdicts
