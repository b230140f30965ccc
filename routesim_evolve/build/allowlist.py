"""The candidate allow-list, enforced by the Go tool `candcheck`.

The rules live in one place: go/cmd/candcheck/allowlist.json, embedded in
candcheck and read here only to tell a proposer what it may import. Checking
is always candcheck's (go/parser, the same parser as the compiler), built once
per source hash into the cache folder.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from routesim_evolve.build.gomodule import (
    CANDIDATE_SLOT,
    GoToolchainError,
    cache_root,
    go_module_dir,
)
from routesim_evolve.build.tools import GoTool, run_tool, tool_binary

#: The allow-list file, relative to the Go module.
ALLOWLIST_FILE = Path("cmd/candcheck/allowlist.json")

#: candcheck's package, relative to the Go module.
CANDCHECK_PACKAGE = Path("cmd/candcheck")


class DeniedImport(BaseModel):
    """Imports matching `pattern` (a trailing /... matches a subtree) are
    refused, with `reason`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str
    reason: str


class AllowList(BaseModel):
    """go/cmd/candcheck/allowlist.json."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = Field(pattern=r"^routesim-allowlist/1$")
    comment: str = ""
    max_source_bytes: int = Field(gt=0)
    allowed_imports: tuple[str, ...]
    denied_imports: tuple[DeniedImport, ...]


class Finding(BaseModel):
    """One rule a candidate breaks, as candcheck reports it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    line: int
    column: int
    message: str
    text: str

    def render(self) -> str:
        """`candidate_impl.go:L:C: message` and the offending line."""
        where = f"{CANDIDATE_SLOT.name}:{self.line}:{self.column}"
        return f"{where}: {self.message}\n\t{self.line} | {self.text.strip()}"


class CheckReport(BaseModel):
    """candcheck's verdict on one candidate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    findings: tuple[Finding, ...] = ()

    def render(self) -> str:
        """Every finding, for a proposer's feedback."""
        return "\n".join(f.render() for f in self.findings)


def load_allowlist(go_dir: Path | None = None) -> AllowList:
    """The allow-list, for prompts that tell a proposer what it may import."""
    path = (go_dir or go_module_dir()) / ALLOWLIST_FILE
    return AllowList.model_validate_json(path.read_bytes())


#: candcheck and the packages it is built from.
CANDCHECK = GoTool(
    name="candcheck",
    main=CANDCHECK_PACKAGE,
    packages=(CANDCHECK_PACKAGE, Path("cmd/internal/checkcmd")),
)


def candcheck_binary(go_dir: Path | None = None, root: Path | None = None) -> Path:
    """candcheck, built on first use and kept in the cache folder."""
    return tool_binary(CANDCHECK, go_dir, root)


def check_source(
    source: str, *, go_dir: Path | None = None, root: Path | None = None
) -> CheckReport:
    """Run candcheck on a candidate's source. A harness failure (candcheck
    itself broken) raises GoToolchainError, and candcheck's bytes not being
    the ones built TrustedFileChanged; a bad candidate never raises. What
    runs is the descriptor whose bytes were checked, so a swap between the
    check and the start changes nothing."""
    go_dir = go_dir or go_module_dir()
    root = root or cache_root()
    scratch = root / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="check-", dir=scratch) as tmp:
        path = Path(tmp) / CANDIDATE_SLOT.name
        path.write_text(source, encoding="utf-8", errors="surrogateescape")
        pkgdir = go_dir / CANDIDATE_SLOT.parent
        proc = run_tool(CANDCHECK, ["-pkgdir", str(pkgdir), str(path)], timeout=120,
                        go_dir=go_dir, root=root)
    if proc.returncode not in (0, 1):
        raise GoToolchainError(f"candcheck exited {proc.returncode}: {proc.stderr.decode()}")
    try:
        return CheckReport.model_validate(orjson.loads(proc.stdout))
    except (orjson.JSONDecodeError, ValidationError) as exc:
        raise GoToolchainError(f"candcheck printed an unreadable report: {exc}") from exc
