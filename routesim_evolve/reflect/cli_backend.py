"""Reflection through the agent command-line tools, `claude` and `codex`.

Both run as subprocesses in a scratch directory with a timeout and a scrubbed
environment, in one of two modes:

* single call (`complete`): the whole prompt on stdin, the reply text out;
* agentic (`propose_in_workdir`): the current candidate is written to
  `candidate_impl.go` with an instructions file beside it; the agent edits
  the file in place (and may run an evaluation script on the minibatch), and
  the file it leaves behind is the proposal.

Command lines (flags from Claude Code's CLI reference and headless-mode docs,
and from codex's `codex-rs/exec/src/cli.rs` and non-interactive-mode docs):

    claude -p --output-format json [--model M] [--effort E]
           [--permission-mode acceptEdits --allowedTools Read Edit Write ...]
    codex exec [--model M] [-c model_reasoning_effort="E"]
           --sandbox read-only|workspace-write --skip-git-repo-check
           --ephemeral --color never --output-last-message FILE -

`claude -p` reads the prompt from stdin when no prompt argument is given and
prints one JSON object whose `result` is the reply; `codex exec -` reads the
prompt from stdin and writes the agent's last message to FILE.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from routesim_evolve.reflect.base import (
    PromptLike,
    PromptParts,
    Retrying,
    RetryPolicy,
    Sleep,
    as_prompt,
)
from routesim_evolve.reflect.errors import ProposalFailed, TransientError
from routesim_evolve.reflect.extract import Extraction, gofmt_error

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 900.0
CANDIDATE_FILE = "candidate_impl.go"
INSTRUCTIONS_FILE = "INSTRUCTIONS.md"
_STDERR_TAIL = 2_000

# What every agent needs: to find programs, its home (login, config), the
# locale, a temp dir, proxies and CA bundles; and the Go toolchain, for the
# evaluation script the agent may run. Everything else (other keys, tokens,
# this project's settings) stays out of the agent's reach.
COMMON_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TERM",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "GOROOT",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "GOPROXY",
)
CLAUDE_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "CLOUD_ML_REGION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AWS_REGION",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
)
# No self-updates or telemetry from inside an evolution run.
CLAUDE_FIXED_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
CODEX_ENV = (
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "CODEX_HOME",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)

AGENT_TASK = (
    f"Read {INSTRUCTIONS_FILE} in the current directory and do what it asks: improve the "
    f"router by editing {CANDIDATE_FILE} in place. When you are done, reply with a short "
    "summary of what you changed and why."
)


class CLIRun(BaseModel):
    """What one finished agent process left behind."""

    model_config = ConfigDict(frozen=True)

    stdout: str
    stderr: str
    returncode: int


def scrubbed_env(
    keep: Sequence[str],
    *,
    fixed: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The child environment: only `keep` (plus COMMON_ENV) from `source`,
    then `fixed` and the caller's `extra`."""
    source = os.environ if source is None else source
    env = {k: source[k] for k in (*COMMON_ENV, *keep) if k in source}
    env.update(fixed or {})
    env.update(extra or {})
    return env


def run_cli(
    args: Sequence[str],
    *,
    stdin: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
) -> CLIRun:
    """Run an agent CLI to completion. A timeout kills its whole process
    group (agents start their own subprocesses) and is a TransientError, as
    is a non-zero exit; a missing program is a ProposalFailed."""
    try:
        proc = subprocess.Popen(
            list(args),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as err:
        raise ProposalFailed(f"cannot start {args[0]}: {err}") from err
    try:
        stdout, stderr = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        _kill_group(proc)
        raise TransientError(f"{Path(args[0]).name} timed out after {timeout:.0f}s") from err
    if proc.returncode != 0:
        tail = (stderr.strip() or stdout.strip())[-_STDERR_TAIL:]
        raise TransientError(f"{Path(args[0]).name} exited with status {proc.returncode}: {tail}")
    return CLIRun(stdout=stdout, stderr=stderr, returncode=proc.returncode)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        # Something that left the group still holds our pipes: stop reading.
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


class AgentCLIBackend:
    """What `claude` and `codex` share; subclasses supply the command lines
    and read the reply."""

    tool: str = ""
    env_keys: tuple[str, ...] = ()
    fixed_env: Mapping[str, str] = {}

    def __init__(
        self,
        model: str | None = None,
        effort: str | None = None,
        *,
        executable: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        scratch_root: Path | None = None,
        extra_env: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.name = ":".join(p for p in (self.tool, model, effort) if p)
        self.model = model
        self.effort = effort
        self.executable = executable or self.tool
        self.timeout = timeout
        self._scratch_root = scratch_root
        self._extra_env = dict(extra_env or {})
        self._retrying = Retrying(self.name, retry, sleep, rng)

    # -- subclass hooks ---------------------------------------------------

    def single_call_args(self, out_dir: Path) -> list[str]:
        raise NotImplementedError

    def agentic_args(
        self, out_dir: Path, eval_script: Path | None, writable_dirs: Sequence[Path]
    ) -> list[str]:
        raise NotImplementedError

    def reply_text(self, run: CLIRun, out_dir: Path) -> str:
        raise NotImplementedError

    # -- single call ------------------------------------------------------

    def complete(self, prompt: PromptLike) -> str:
        text = as_prompt(prompt).flat()
        return self._with_retries(lambda: self._single_call(text))

    def _single_call(self, text: str) -> str:
        with self._scratch() as (work, out):
            run = self._run(self.single_call_args(out), text, work)
            return self.reply_text(run, out)

    # -- agentic ----------------------------------------------------------

    def propose_in_workdir(
        self,
        prompt: PromptLike,
        candidate: str,
        *,
        eval_script: Path | None = None,
        workdir: Path | None = None,
        writable_dirs: Sequence[Path] = (),
    ) -> str:
        """Let the agent edit `candidate` in a work dir and return the file it
        leaves. `eval_script`, if given, is a program the agent may run there
        to score its edit on the minibatch; `writable_dirs` are extra
        directories it may write (e.g. the Go build cache the script uses).
        Raises ProposalFailed when no usable file comes out of two rounds."""
        parts = as_prompt(prompt)
        with self._scratch(workdir) as (work, out):
            target = work / CANDIDATE_FILE
            target.write_text(candidate)
            (work / INSTRUCTIONS_FILE).write_text(agent_instructions(parts, eval_script))
            args = self.agentic_args(out, eval_script, writable_dirs)
            first = self._agent_round(args, AGENT_TASK, target, candidate)
            if first.ok:
                return _code(first)
            second = self._agent_round(args, agent_follow_up(first), target, candidate)
            if second.ok:
                return _code(second)
            raise ProposalFailed(f"{self.name}: no usable {CANDIDATE_FILE}: {second.reason}")

    def _agent_round(self, args: list[str], task: str, target: Path, original: str) -> Extraction:
        start = target.read_text() if target.is_file() else original

        def attempt() -> None:
            # A retried run starts from this round's file, not a half-edit.
            target.write_text(start)
            self._run(args, task, target.parent)

        self._with_retries(attempt)
        return check_candidate(target, original)

    # -- plumbing ---------------------------------------------------------

    def _run(self, args: list[str], stdin: str, cwd: Path) -> CLIRun:
        env = scrubbed_env(self.env_keys, fixed=self.fixed_env, extra=self._extra_env)
        return run_cli(args, stdin=stdin, cwd=cwd, env=env, timeout=self.timeout)

    def _with_retries(self, call: Callable[[], T]) -> T:
        return self._retrying.run(call)

    def _resolved_executable(self) -> str:
        return shutil.which(self.executable) or self.executable

    @contextmanager
    def _scratch(self, workdir: Path | None = None) -> Iterator[tuple[Path, Path]]:
        """A work dir for the agent (the caller's, or a fresh one) and a
        private dir outside it for the tool's own output files."""
        with tempfile.TemporaryDirectory(
            prefix=f"routesim-{self.tool}-", dir=self._scratch_root
        ) as tmp:
            root = Path(tmp)
            out = root / "out"
            out.mkdir()
            work = workdir or root / "work"
            work.mkdir(parents=True, exist_ok=True)
            yield work, out


def check_candidate(target: Path, original: str) -> Extraction:
    """The file the agent left, if it is a changed, parsing Go file."""
    if not target.is_file():
        return Extraction(reason=f"the agent deleted {CANDIDATE_FILE}")
    code = target.read_text()
    if code == original:
        return Extraction(reason=f"the agent left {CANDIDATE_FILE} unchanged")
    if "package main" not in code:
        return Extraction(reason=f"{CANDIDATE_FILE} is no longer `package main`")
    error = gofmt_error(code)
    if error:
        return Extraction(reason=f"{CANDIDATE_FILE} does not parse (gofmt -e):\n{error}")
    return Extraction(code=code)


def agent_instructions(prompt: PromptParts, eval_script: Path | None) -> str:
    """The instructions file: the reflection prompt, static part first, then
    how this work dir is used."""
    steps = [
        f"- Edit `{CANDIDATE_FILE}` in this directory in place, instead of replying with the "
        "file. When you exit, its contents are the proposal; nothing else here is kept.",
        f"- It must stay one complete Go file in `package main`. Check that it parses with "
        f"`gofmt -l -e {CANDIDATE_FILE}`.",
    ]
    if eval_script is not None:
        steps.append(
            f"- `{eval_script}` builds `{CANDIDATE_FILE}` from this directory and scores it on "
            "the minibatch, printing the score and feedback. Use it to check an idea; each run "
            "takes a while."
        )
    return (
        f"{prompt.static.rstrip()}\n\n{prompt.dynamic.rstrip()}\n\n"
        "## Working in this directory\n\n" + "\n".join(steps) + "\n"
    )


def agent_follow_up(result: Extraction) -> str:
    return (
        f"{CANDIDATE_FILE} is not usable yet: {result.reason}\n\n"
        f"Fix {CANDIDATE_FILE} in place (see {INSTRUCTIONS_FILE}): it must be a complete, "
        "changed Go file in `package main` that parses."
    )


def _code(result: Extraction) -> str:
    assert result.code is not None
    return result.code


class ClaudeCLIBackend(AgentCLIBackend):
    """Claude Code in print mode (`claude -p`)."""

    tool = "claude"
    env_keys = CLAUDE_ENV
    fixed_env = CLAUDE_FIXED_ENV

    def _base_args(self) -> list[str]:
        args = [self._resolved_executable(), "-p", "--output-format", "json"]
        if self.model:
            args += ["--model", self.model]
        if self.effort:
            args += ["--effort", self.effort]
        return args

    def single_call_args(self, out_dir: Path) -> list[str]:
        return self._base_args()

    def agentic_args(
        self, out_dir: Path, eval_script: Path | None, writable_dirs: Sequence[Path]
    ) -> list[str]:
        # acceptEdits lets it edit files in its cwd without asking; shell
        # commands are limited to gofmt and the evaluation script.
        tools = ["Read", "Edit", "Write", "Bash(gofmt:*)"]
        if eval_script is not None:
            tools.append(f"Bash({eval_script}:*)")
        args = [*self._base_args(), "--permission-mode", "acceptEdits"]
        for d in writable_dirs:
            args += ["--add-dir", str(d)]
        return [*args, "--allowedTools", *tools]

    def reply_text(self, run: CLIRun, out_dir: Path) -> str:
        result = parse_claude_json(run.stdout)
        if result.get("is_error"):
            detail = result.get("result") or result.get("subtype") or "unknown error"
            raise TransientError(f"claude reported an error: {detail}")
        text = result.get("result")
        return text if isinstance(text, str) else ""


def parse_claude_json(stdout: str) -> dict[str, object]:
    """The `--output-format json` result object: the whole stdout, or failing
    that its last line that is a JSON object (should anything print first)."""
    for candidate in (stdout, *reversed(stdout.strip().splitlines())):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise TransientError(f"claude printed no JSON result: {stdout.strip()[-_STDERR_TAIL:]!r}")


class CodexCLIBackend(AgentCLIBackend):
    """OpenAI Codex CLI in non-interactive mode (`codex exec`)."""

    tool = "codex"
    env_keys = CODEX_ENV
    last_message_file = "last_message.txt"

    def _args(self, out_dir: Path, sandbox: str, writable_dirs: Sequence[Path] = ()) -> list[str]:
        args = [self._resolved_executable(), "exec"]
        if self.model:
            args += ["--model", self.model]
        if self.effort:
            # -c takes a TOML value; quoting keeps it a string.
            args += ["-c", f'model_reasoning_effort="{self.effort}"']
        args += ["--sandbox", sandbox]
        for d in writable_dirs:
            args += ["--add-dir", str(d)]
        return [
            *args,
            # The work dir is a scratch dir, not a git checkout.
            "--skip-git-repo-check",
            "--ephemeral",
            "--color",
            "never",
            "--output-last-message",
            str(out_dir / self.last_message_file),
            "-",  # the prompt comes on stdin
        ]

    def single_call_args(self, out_dir: Path) -> list[str]:
        return self._args(out_dir, "read-only")

    def agentic_args(
        self, out_dir: Path, eval_script: Path | None, writable_dirs: Sequence[Path]
    ) -> list[str]:
        return self._args(out_dir, "workspace-write", writable_dirs)

    def reply_text(self, run: CLIRun, out_dir: Path) -> str:
        # The last-message file is exactly the final reply; stdout holds the
        # same text but is the fallback only.
        path = out_dir / self.last_message_file
        return path.read_text() if path.is_file() else run.stdout
