"""Read a crashed routesim's standard error: the panic or fatal error, and
where in the candidate's file it happened.

Go prints a panic as `panic: MESSAGE`, a runtime failure as `fatal error:
MESSAGE`, then goroutine stacks: a function line, then a tab-indented
`FILE:LINE +0xOFF` line per frame. Binaries are built with -trimpath, so the
candidate's frames are in `.../cmd/routesim/candidate_impl.go`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from routesim_evolve.textclip import clip_block, clip_line

CANDIDATE_FILE = "candidate_impl.go"

_FRAME_FILE = re.compile(r"^\t(?P<file>\S+?):(?P<line>\d+)(?: \+0x[0-9a-f]+)?")
_GOROUTINE = re.compile(r"^goroutine \d+")
_CALL_ARGS = re.compile(r"\((?:[^()]|\([^()]*\))*\)$")

#: Messages Go prints when memory ran out, under RLIMIT_AS or GOMEMLIMIT.
MEMORY_SIGNS = (
    "out of memory",
    "cannot allocate memory",
    "failed to create new OS thread",
    "errno=12",
    "runtime: mmap:",
)


class Frame(BaseModel):
    """One stack frame."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str
    file: str
    line: int

    @property
    def in_candidate(self) -> bool:
        """True for a frame of the candidate's own file."""
        return self.file.endswith("/" + CANDIDATE_FILE) or self.file == CANDIDATE_FILE


class Crash(BaseModel):
    """What standard error says about a crash."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: "panic", "fatal" (a runtime failure), "signal" (SIGQUIT dump) or "".
    kind: str
    message: str
    #: The first goroutine's frames that reach the candidate, innermost first.
    frames: tuple[Frame, ...]

    @property
    def candidate_frames(self) -> tuple[Frame, ...]:
        """The frames in the candidate's file."""
        return tuple(f for f in self.frames if f.in_candidate)


_HEADLINES = (("panic: ", "panic"), ("fatal error: ", "fatal"))


def _headline(lines: list[str]) -> tuple[str, str, int]:
    """The crash's kind, message and the index of the line after it. The
    runtime prints its trace last, as the process dies: a headline the
    candidate printed itself can only come earlier, so the last one wins,
    even where the candidate's unfinished line runs into it. A line that
    starts with a tab continues a panic's message (Go indents every line of
    it after the first), so a headline in it is the candidate's text: a
    panic that spells the runtime's out-of-memory error stays a panic."""
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if line.startswith("\t"):
            continue
        found = [(line.rfind(prefix), prefix, kind) for prefix, kind in _HEADLINES]
        at, prefix, kind = max(found)
        if at >= 0:
            # A panic message may span lines up to the blank line before the
            # stacks; runtime out-of-memory notes come just before.
            msg = [line[at + len(prefix) :]]
            j = i + 1
            while j < len(lines) and lines[j].strip() and not _GOROUTINE.match(lines[j]):
                msg.append(lines[j])
                j += 1
            if kind == "fatal" and i > 0 and lines[i - 1].startswith("runtime: "):
                msg.insert(0, lines[i - 1])
            return kind, clip_block("\n".join(msg), 1000), j
        if "SIGQUIT: quit" in line:
            return "signal", "SIGQUIT: quit", i + 1
    return "", "", 0


def _goroutines(lines: list[str]) -> list[list[Frame]]:
    """Every goroutine's frames, in the order printed."""
    stacks: list[list[Frame]] = []
    prev = ""
    for line in lines:
        if _GOROUTINE.match(line):
            stacks.append([])
        elif stacks and (m := _FRAME_FILE.match(line)):
            function = _CALL_ARGS.sub("", prev.strip()) or prev.strip()
            stacks[-1].append(Frame(function=function, file=m["file"], line=int(m["line"])))
        prev = line
    return stacks


def parse_crash(stderr: str) -> Crash:
    """The crash in `stderr`; kind "" when there is none."""
    lines = stderr.splitlines()
    kind, message, after = _headline(lines)
    stacks = _goroutines(lines[after:])
    # The panicking goroutine is printed first; a SIGQUIT dump starts with
    # runtime goroutines, so prefer the first stack that reaches the candidate.
    reaching = [s for s in stacks if any(f.in_candidate for f in s)]
    frames = reaching[0] if reaching else (stacks[0] if stacks else [])
    return Crash(kind=kind, message=message, frames=tuple(frames))


def looks_like_memory(stderr: str) -> bool:
    """True when standard error reports memory running out."""
    low = stderr.lower()
    return any(sign.lower() in low for sign in MEMORY_SIGNS)


def render_frames(crash: Crash, source: str | None, *, limit: int = 6) -> str:
    """The top of the stack in the candidate's file, each frame with its
    source line when the source is known; the top frames overall when the
    candidate's file is not on the stack."""
    frames = crash.candidate_frames[:limit] or crash.frames[:3]
    source_lines = source.splitlines() if source is not None else []
    out = []
    for f in frames:
        where = f"{CANDIDATE_FILE}:{f.line}" if f.in_candidate else f"{f.file}:{f.line}"
        out.append(f"  at {where} in {f.function}")
        if f.in_candidate and 0 < f.line <= len(source_lines):
            out.append(f"\t{f.line} | {clip_line(source_lines[f.line - 1].strip())}")
    return "\n".join(out)
