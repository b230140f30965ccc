"""Reflection through the agent command-line tools, `claude` and `codex`.

Both run as watched subprocesses (process.py: a limit on the whole run and
a no-progress timeout) in a scratch directory with a scrubbed environment,
inside a jail (jail.py: the file system read-only, the run's secrets
hidden, no view of the harness's processes), in one of two modes:

* single call (`complete`): the whole prompt on stdin, the reply text out;
* agentic (`propose_in_workdir`): the current candidate is written to
  `candidate_impl.go` with an instructions file beside it; the agent edits
  the file in place (and may run an evaluation script on the minibatch), and
  the file it leaves behind is the proposal.

Everything an agent can write is the agent's (hostile_fs.py): each attempt
gets a work dir and an output dir the harness has just made, written with
new files only; what the harness takes back (the candidate, codex's last
message) is read without following links, as a regular file, capped, into
memory, and the next attempt starts in new folders from that copy. The agent
never gets the user's home or the tool's real state folder: it gets a
private home per proposal holding copies of the tool's login and settings
(`StateFile`); only a login file comes back, and only as a JSON object
(a refreshed token), never settings an agent could fill with hooks.

Command lines (flags from Claude Code's CLI reference and headless-mode docs,
and from codex's `codex-rs/exec/src/cli.rs` and non-interactive-mode docs):

    claude -p --output-format stream-json --verbose [--model M] [--effort E]
           [--permission-mode acceptEdits --add-dir D --allowedTools Read Edit ...]
    codex exec [-c model_provider=... (a base URL)] [--model M]
           [-c model_reasoning_effort="E"] --sandbox read-only|workspace-write
           [--add-dir D] --skip-git-repo-check --ephemeral --color never --json
           --output-last-message FILE -

`claude -p` reads the prompt from stdin and prints one JSON event per line,
the last a `result` event with the reply, its usage and `total_cost_usd`;
`codex exec -` reads the prompt from stdin, prints JSONL events (usage in
`turn.completed`) and writes the agent's last message to FILE.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Unpack

from pydantic import BaseModel, ConfigDict

from routesim_evolve.build.gomodule import GoToolchainError, cache_root, go_env
from routesim_evolve.build.source import MAX_SOURCE_BYTES, NotSourceText, source_text
from routesim_evolve.fsutil import MIB, atomic_write
from routesim_evolve.hostile_fs import Folder, HostileEntry
from routesim_evolve.reflect.base import PlumbedBackend, Plumbing, PromptParts, backend_name
from routesim_evolve.reflect.errors import BackendUnavailable, ProposalFailed, TransientError
from routesim_evolve.reflect.extract import Extraction, find_gofmt, gofmt_error
from routesim_evolve.reflect.jail import AgentJail
from routesim_evolve.reflect.process import STDERR_TAIL, CLIRun, run_cli
from routesim_evolve.reflect.usage import Completion, Usage

log = logging.getLogger(__name__)

CANDIDATE_FILE = "candidate_impl.go"
# The agent's temp dir (TMPDIR), in its output dir: /tmp in the jail is the
# jail's own, and vanishes with it.
TMP_DIR = "tmp"
INSTRUCTIONS_FILE = "INSTRUCTIONS.md"

# What every agent gets of the caller's environment: to find programs, who
# it runs as, the locale and time zone, proxies and CA bundles. The harness
# sets HOME (the agent's private home) and TMPDIR (its own temp dir); the
# tool adds its keys. Nothing else: no other keys or tokens, no Go or project
# settings, no folder of the user's (docs/llm.md lists it).
COMMON_ENV = (
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
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
)
# Variables that name a file or folder the tool must read: bound read-only
# into the jail, which holds nothing of the user's otherwise.
PATH_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
            "GOOGLE_APPLICATION_CREDENTIALS")
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
    f"router by editing {CANDIDATE_FILE} in place. When you are done, reply with one line "
    "saying what you changed and why: your next tasks recall it, with how the change fared."
)


#: The most of a file the harness takes back from an agent's folders: a
#: tool's reply (codex's last message), a login file.
MAX_REPLY_BYTES = 8 * MIB
MAX_LOGIN_BYTES = 1 * MIB


class StateFile(BaseModel):
    """One of the tool's own files, copied into the agent's private home:
    `source` is the user's, `inside` its place under the private home; a
    `login` file (a token the tool may refresh) is copied back."""

    model_config = ConfigDict(frozen=True)

    source: Path
    inside: Path
    login: bool = False


def scrubbed_env(
    keep: Sequence[str],
    *,
    fixed: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The child environment: only `keep` (plus COMMON_ENV and HOME, the
    caller's unless `extra` sets the agent's) from `source`, then `fixed`
    and the caller's `extra`."""
    source = os.environ if source is None else source
    env = {k: source[k] for k in (*COMMON_ENV, "HOME", *keep) if k in source}
    env.update(fixed or {})
    env.update(extra or {})
    return env


class AgentCLIBackend(PlumbedBackend):
    """What `claude` and `codex` share; subclasses supply the command lines
    and read the reply and its usage from the tool's event stream."""

    tool: str = ""
    install_hint: str = ""
    env_keys: tuple[str, ...] = ()
    fixed_env: Mapping[str, str] = {}
    # The tool's own "am I signed in?" command (exit 0 when it is), the
    # variables that stand in for a login, and what to do without either.
    login_status: tuple[str, ...] = ()
    credential_env: tuple[str, ...] = ()
    login_hint: str = ""
    # Whether a base URL alone lets the tool start (codex) or it still wants
    # a key or a login in front of any server (claude: "Not logged in").
    endpoint_needs_login: bool = False
    # Variables that point the tool at its real state folder: in the jail
    # the tool finds its state in the private home instead.
    state_env: tuple[str, ...] = ()

    def __init__(
        self,
        model: str | None = None,
        effort: str | None = None,
        *,
        base_url: str | None = None,
        executable: str | None = None,
        scratch_root: Path | None = None,
        extra_env: Mapping[str, str] | None = None,
        jail: AgentJail | None = None,
        **plumbing: Unpack[Plumbing],
    ) -> None:
        self.name = backend_name(self.tool, model, effort)
        self.model = model
        self.effort = effort
        self.base_url = base_url
        self.executable = executable or self.tool
        super().__init__(**plumbing)
        self._scratch_root = scratch_root
        self._extra_env = dict(extra_env or {})
        # The project cache is hidden from any agent; a run hides its own
        # folders too (propose/agentic.py's run_jail).
        self.jail = jail or AgentJail(hidden=(cache_root(),))

    # -- subclass hooks ---------------------------------------------------

    def single_call_args(self, out_dir: Path) -> list[str]:
        raise NotImplementedError

    def agentic_args(
        self, out_dir: Path, eval_script: Path | None, writable_dirs: Sequence[Path]
    ) -> list[str]:
        raise NotImplementedError

    def reply(self, run: CLIRun, out: Folder) -> Completion:
        """The reply text and usage one finished run left (in its output
        and in `out`, its output dir)."""
        raise NotImplementedError

    def is_progress(self, line: str) -> bool:
        """Whether a line of the tool's stdout shows the agent is working."""
        return bool(line.strip())

    def tool_env(self) -> dict[str, str]:
        """Variables this tool needs set for the spec (e.g. a base URL)."""
        return {}

    def state_files(self) -> list[StateFile]:
        """The tool's own files (login, settings) its private home gets a
        copy of."""
        return []

    # -- preflight --------------------------------------------------------

    def preflight(self) -> None:
        """The program is installed, starts (`--version`) and has a way to
        reach its model: a base URL, a key in the environment, or a login.
        An installed but signed-out agent would otherwise spend every
        iteration reconnecting until the idle timeout."""
        path = shutil.which(self.executable)
        if path is None:
            raise BackendUnavailable(
                f"{self.name}: `{self.executable}` is not on PATH; {self.install_hint}"
            )
        try:
            subprocess.run([path, "--version"], capture_output=True, timeout=60, check=True,
                           env=self._env())
        except (OSError, subprocess.SubprocessError) as err:
            raise BackendUnavailable(f"{self.name}: `{path} --version` failed: {err}") from None
        if self._endpoint() is None or self.endpoint_needs_login:
            missing = self.missing_login(path, self._env())
            if missing is not None:
                raise BackendUnavailable(f"{self.name}: {missing}")
        try:
            self.jail.probe()
        except BackendUnavailable as exc:
            raise BackendUnavailable(f"{self.name}: {exc}") from None

    @classmethod
    def missing_login(cls, path: str, source: Mapping[str, str] | None = None) -> str | None:
        """Why the tool at `path` cannot reach its model's default service
        with the environment `source` (signed out, no key), or None when it
        can. It needs no back-end: detection asks it of any CLI on PATH."""
        env = os.environ if source is None else source
        if any(env.get(key) for key in cls.credential_env):
            return None
        command = [path, *cls.login_status]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                                  env=scrubbed_env(cls.env_keys, source=env))
        except (OSError, subprocess.SubprocessError) as err:
            return f"`{' '.join(command)}` failed ({err}); {cls.login_hint}"
        if done.returncode == 0:
            return None
        said = " ".join((done.stdout + done.stderr).split())[-200:] or f"exit {done.returncode}"
        return f"not signed in (`{cls.tool} {' '.join(cls.login_status)}`: {said}); " \
            f"{cls.login_hint}"

    def _endpoint(self) -> str | None:
        """The base URL the tool is pointed at, if any."""
        return self.base_url

    # -- single call ------------------------------------------------------

    def complete(self, prompt: PromptParts) -> Completion:
        text = prompt.flat()
        return self._retrying.run(lambda: self._single_call(text))

    def _single_call(self, text: str) -> Completion:
        with self._private_home() as home, _Workspace(self._scratch_root, self.tool) as ws:
            run = self._run(self.single_call_args(ws.out), text, ws, home)
            return self._charged(self.reply(run, ws.out_folder))

    def _charged(self, completion: Completion) -> Completion:
        if self.meter is not None:
            self.meter.charge(self.name, self.model, completion.usage)
        return completion

    # -- agentic ----------------------------------------------------------

    def propose_in_workdir(
        self,
        prompt: PromptParts,
        candidate: str,
        *,
        eval_script: Path | None = None,
        writable_dirs: Sequence[Path] = (),
    ) -> Completion:
        """Let the agent edit `candidate` in a work dir; the completion's text
        is the file it leaves. `eval_script`, if given, is a program the
        agent may run there to score its edit on the minibatch;
        `writable_dirs` are the folders that script writes (the evaluation
        server's spool). Raises ProposalFailed when no usable file comes out
        of two rounds."""
        spent = Usage()
        task = _AgentTask(instructions=agent_instructions(prompt, eval_script).encode(),
                          eval_script=eval_script, spool=tuple(writable_dirs))
        start = candidate.encode()
        message = AGENT_TASK
        with self._private_home() as home:
            for _ in range(2):
                left, reply = self._agent_round(task, start, message, home)
                spent += reply.usage
                result = check_candidate(left, candidate)
                if result.ok:
                    return Completion(text=_code(result), usage=spent, said=reply.text)
                # The next round starts from what this one left, even bytes
                # that are not UTF-8 (which check_candidate refused).
                start = left if isinstance(left, bytes) else start
                message = agent_follow_up(result)
        raise ProposalFailed(f"{self.name}: no usable {CANDIDATE_FILE}: {result.reason}")

    def _agent_round(
        self, task: _AgentTask, start: bytes, message: str, home: Path
    ) -> tuple[bytes | HostileEntry, Completion]:
        """One round, retried as a whole: each attempt in new folders,
        starting from `start`; what the agent left there, and its reply."""

        def attempt() -> tuple[bytes | HostileEntry, Completion]:
            with _Workspace(self._scratch_root, self.tool) as ws:
                ws.work_folder.create(CANDIDATE_FILE, start)
                ws.work_folder.create(INSTRUCTIONS_FILE, task.instructions)
                args = self.agentic_args(ws.out, task.eval_script, task.spool)
                # The eval script's folder, to run it (read-only).
                shown = [task.eval_script.parent] if task.eval_script is not None else []
                run = self._run(args, message, ws, home, task.spool, shown)
                reply = self._charged(self.reply(run, ws.out_folder))
                return ws.take_candidate(), reply

        return self._retrying.run(attempt)

    # -- plumbing ---------------------------------------------------------

    def _env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The tool's environment outside the jail (preflight): the user's
        HOME and state folders."""
        return scrubbed_env(
            self.env_keys, fixed=self.fixed_env,
            extra={**self.tool_env(), **self._extra_env, **(extra or {})},
        )

    def _jail_env(self, home: Path, tmp: Path) -> dict[str, str]:
        """The tool's environment in the jail: its private home and temp
        dir, and no variable pointing at the user's state."""
        env = self._env({"HOME": str(home), "TMPDIR": str(tmp)})
        for name in self.state_env:
            env.pop(name, None)
        return env

    def _run(
        self, args: list[str], stdin: str, ws: _Workspace, home: Path,
        writable: Sequence[Path] = (), shown: Sequence[Path] = (),
    ) -> CLIRun:
        """The tool run in its jail, in the attempt's work dir, able to write
        it, its output dir, its private home and `writable`, and to read
        `shown` besides what every run needs."""
        if not os.access(args[0], os.X_OK):
            raise ProposalFailed(f"cannot start {args[0]}: no such program", permanent=True)
        env = self._jail_env(home, ws.out / TMP_DIR)
        jailed = self.jail.command(
            args, writable=[ws.work, ws.out, home, *writable], cwd=ws.work,
            visible=[*self._needs(args[0], env), *shown])
        return run_cli(
            jailed, stdin=stdin, cwd=ws.work, env=env,
            timeout=self.options.agent_timeout, idle_timeout=self.options.idle_timeout,
            is_progress=self.is_progress, name=Path(args[0]).name,
        )

    @staticmethod
    def _needs(executable: str, env: Mapping[str, str]) -> list[Path]:
        """What any tool run needs to read besides the system's files: its
        install (an npm package's whole prefix), the interpreter its script
        names, this Python (the eval script's client), Go's root (gofmt) and
        module cache (sources worth reading), and the files its environment
        names (CA bundles, a cloud credentials file)."""
        real = Path(executable).resolve()
        install = next((p.parent for p in real.parents if p.name == "node_modules"),
                       real.parent)
        gofmt = find_gofmt()
        go_root = [Path(gofmt).resolve().parents[1]] if gofmt else []
        named = [Path(env[k]) for k in PATH_ENV if env.get(k)]
        return [install, *_interpreter_root(real, env.get("PATH")), Path(sys.prefix),
                Path(sys.base_prefix), *go_root, *_module_cache(), *named]

    def _resolved_executable(self) -> str:
        return shutil.which(self.executable) or self.executable

    @contextmanager
    def _private_home(self) -> Iterator[Path]:
        """A home of the agent's own for one proposal: copies of the tool's
        state files in; after it, each login file the tool changed copied
        back, if it is still a plain file holding a JSON object."""
        with tempfile.TemporaryDirectory(
            prefix=f"routesim-{self.tool}-home-", dir=self._scratch_root
        ) as tmp:
            home = Path(tmp)
            given = {f: _copy_in(f, home) for f in self.state_files()}
            try:
                yield home
            finally:
                for state, before in given.items():
                    if state.login and before is not None:
                        _copy_login_back(state, home, before)


class _AgentTask(BaseModel):
    """What every round of one proposal hands its agent."""

    model_config = ConfigDict(frozen=True)

    instructions: bytes
    eval_script: Path | None
    spool: tuple[Path, ...]


class _Workspace:
    """One attempt's folders, made by the harness: the agent's work dir and
    a private output dir for the tool's own files (its temp dir inside),
    each held by a descriptor taken while it was new."""

    def __init__(self, scratch_root: Path | None, tool: str) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix=f"routesim-{tool}-", dir=scratch_root)
        root = Path(self._tmp.name)
        self.work, self.out = root / "work", root / "out"
        self.work.mkdir()
        (self.out / TMP_DIR).mkdir(parents=True)
        self.work_folder = Folder(self.work)
        self.out_folder = Folder(self.out)

    def __enter__(self) -> _Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.work_folder.close()
        self.out_folder.close()
        self._tmp.cleanup()

    def take_candidate(self) -> bytes | HostileEntry:
        """The bytes the agent left as the candidate, or why none can be taken."""
        try:
            return self.work_folder.read(CANDIDATE_FILE, MAX_SOURCE_BYTES)
        except HostileEntry as exc:
            return exc


def _interpreter_root(script: Path, path: str | None) -> list[Path]:
    """The install of the interpreter a script names on its `#!` line (node,
    for the npm CLIs), where it lies outside the system's folders."""
    try:
        with script.open("rb") as f:
            first = f.readline(256)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return []
    program = words[1] if Path(words[0]).name == "env" and len(words) > 1 else words[0]
    found = shutil.which(program, path=path)
    return [Path(found).resolve().parents[1]] if found else []


def _module_cache() -> list[Path]:
    """Go's module cache, where Go can say where it is."""
    try:
        return [Path(go_env("GOMODCACHE"))]
    except GoToolchainError:
        return []


def _copy_in(state: StateFile, home: Path) -> bytes | None:
    """Copy the user's state file into the private home (its folder made
    either way); the bytes copied, or None when there was none."""
    target = home / state.inside
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        data = state.source.read_bytes() if state.source.is_file() else None
    except OSError:
        data = None
    if data is not None:
        with Folder(target.parent) as folder:
            folder.create(target.name, data, mode=0o600)
    return data


def _copy_login_back(state: StateFile, home: Path, before: bytes) -> None:
    """The login file as the agent's tool left it, back to the user's, if
    it changed and is still a plain file holding a JSON object (a refreshed
    token); anything else is dropped with a warning."""
    target = home / state.inside
    try:
        with Folder(target.parent) as folder:
            data = folder.read(target.name, MAX_LOGIN_BYTES)
        if data == before:
            return
        if not isinstance(json.loads(data), dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        log.warning("not copying %s back from the agent's home: %s", state.source, exc)
        return
    atomic_write(state.source, data, mode=0o600)


def check_candidate(left: bytes | HostileEntry, original: str) -> Extraction:
    """The file the agent left, if it is a changed, parsing Go file."""
    if isinstance(left, HostileEntry):
        if left.errno == errno.ENOENT:
            return Extraction(reason=f"the agent deleted {CANDIDATE_FILE}")
        return Extraction(reason=f"the agent left {left}")
    try:
        code = source_text(left, CANDIDATE_FILE)
    except NotSourceText as exc:
        return Extraction(reason=f"the agent's {exc}")
    if code == original:
        return Extraction(reason=f"the agent left {CANDIDATE_FILE} unchanged")
    if "package main" not in code:
        return Extraction(reason=f"{CANDIDATE_FILE} is no longer `package main`")
    error = gofmt_error(code)
    if error:
        return Extraction(reason=f"{CANDIDATE_FILE} does not parse (gofmt -e):\n{error}")
    return Extraction(code=code)


def syntax_check_command() -> str:
    """The one command an agent runs to check that its file parses: gofmt by
    its absolute path (an agent's shell may not have Go's folder on PATH),
    listing without writing, on the candidate alone."""
    return f"{find_gofmt() or 'gofmt'} -l -e {CANDIDATE_FILE}"


def agent_instructions(prompt: PromptParts, eval_script: Path | None) -> str:
    """The instructions file: the reflection prompt, static part first, then
    how this work dir is used."""
    steps = [
        f"- `{CANDIDATE_FILE}` must stay one complete Go file in `package main`. Check that it "
        f"parses with `{syntax_check_command()}`.",
    ]
    if eval_script is not None:
        steps.append(
            f"- `{eval_script} [FILE]` has the harness build FILE (default `{CANDIDATE_FILE}`) "
            "and score it on the minibatch, printing the score and feedback (a build or rule "
            "failure is printed with its reason). Use it to check an idea: each run takes a "
            "while, and a task has a dozen of them."
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


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects among a tool's stdout lines (anything else is skipped)."""
    events = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


class ClaudeCLIBackend(AgentCLIBackend):
    """Claude Code in print mode (`claude -p`), streaming JSON events."""

    tool = "claude"
    install_hint = "install Claude Code (npm install -g @anthropic-ai/claude-code) and log in"
    env_keys = CLAUDE_ENV
    fixed_env = CLAUDE_FIXED_ENV
    login_status = ("auth", "status")
    credential_env = (
        "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
    )
    login_hint = ("run `claude auth login`, or set ANTHROPIC_API_KEY (with a base URL, any "
                  "value the server accepts)")
    endpoint_needs_login = True
    state_env = ("CLAUDE_CONFIG_DIR",)

    def tool_env(self) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": self.base_url} if self.base_url else {}

    def state_files(self) -> list[StateFile]:
        # Claude Code keeps its login (.credentials.json) and settings in
        # ~/.claude and its account in ~/.claude.json, or all of them in
        # $CLAUDE_CONFIG_DIR; in the jail, HOME is the private home.
        env = self._env()
        home = Path(env.get("HOME") or Path.home())
        config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
        folder = config or home / ".claude"
        account = config / ".claude.json" if config else home / ".claude.json"
        return [
            StateFile(source=folder / ".credentials.json",
                      inside=Path(".claude/.credentials.json"), login=True),
            StateFile(source=folder / "settings.json", inside=Path(".claude/settings.json")),
            StateFile(source=account, inside=Path(".claude.json")),
        ]

    def _endpoint(self) -> str | None:
        return self.base_url or os.environ.get("ANTHROPIC_BASE_URL")

    def _base_args(self) -> list[str]:
        # stream-json prints an event per step (our progress signal) and a
        # final `result` event with the reply and its cost; print mode
        # requires --verbose for it.
        args = [self._resolved_executable(), "-p", "--output-format", "stream-json", "--verbose"]
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
        # commands are limited to the syntax check, exactly (gofmt with
        # other flags could rewrite files elsewhere), and the evaluation
        # script.
        tools = ["Read", "Edit", "Write", f"Bash({syntax_check_command()})"]
        if eval_script is not None:
            tools.append(f"Bash({eval_script}:*)")
        args = [*self._base_args(), "--permission-mode", "acceptEdits"]
        for d in writable_dirs:
            args += ["--add-dir", str(d)]
        return [*args, "--allowedTools", *tools]

    def reply(self, run: CLIRun, out: Folder) -> Completion:
        result = claude_result(run.stdout)
        if result.get("is_error"):
            detail = result.get("result") or result.get("subtype") or "unknown error"
            raise TransientError(f"claude reported an error: {detail}")
        text = result.get("result")
        return Completion(text=text if isinstance(text, str) else "", usage=_claude_usage(result))


def claude_result(stdout: str) -> dict[str, Any]:
    """The final `result` event (stream-json), or the one JSON object that
    `--output-format json` prints."""
    events = json_lines(stdout)
    results = [e for e in events if e.get("type") == "result"]
    if results:
        return results[-1]
    try:
        whole = json.loads(stdout)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return whole
    raise TransientError(f"claude printed no result event: {stdout.strip()[-STDERR_TAIL:]!r}")


def _claude_usage(result: Mapping[str, Any]) -> Usage:
    usage = result.get("usage") or {}
    cost = result.get("total_cost_usd")
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        reported_cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


class CodexCLIBackend(AgentCLIBackend):
    """OpenAI Codex CLI in non-interactive mode (`codex exec --json`)."""

    tool = "codex"
    install_hint = "install Codex (npm install -g @openai/codex) and log in or set OPENAI_API_KEY"
    env_keys = CODEX_ENV
    login_status = ("login", "status")
    credential_env = ("OPENAI_API_KEY", "CODEX_API_KEY")
    login_hint = "run `codex login`, or set OPENAI_API_KEY"
    last_message_file = "last_message.txt"
    # Our own provider entry: codex ignores OPENAI_BASE_URL, and overrides of
    # its built-in `openai` provider are not honoured.
    provider_id = "routesim"
    state_env = ("CODEX_HOME",)

    def _endpoint(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL")

    def state_files(self) -> list[StateFile]:
        # Codex keeps its login (auth.json) and config in $CODEX_HOME
        # (~/.codex); in the jail, HOME is the private home.
        env = self._env()
        home = Path(env.get("HOME") or Path.home())
        folder = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return [
            StateFile(source=folder / "auth.json", inside=Path(".codex/auth.json"), login=True),
            StateFile(source=folder / "config.toml", inside=Path(".codex/config.toml")),
        ]

    def _provider_args(self) -> list[str]:
        url = self._endpoint()
        if url is None:
            return []
        pid = self.provider_id
        config = [
            f'model_provider="{pid}"',
            f'model_providers.{pid}.name="{pid}"',
            f'model_providers.{pid}.base_url="{url}"',
            f'model_providers.{pid}.wire_api="responses"',
            # Our retry policy and idle timeout do the waiting.
            f"model_providers.{pid}.request_max_retries=1",
            f"model_providers.{pid}.stream_max_retries=1",
            f"model_providers.{pid}.stream_idle_timeout_ms={int(self.options.idle_timeout * 1000)}",
        ]
        if os.environ.get("OPENAI_API_KEY"):
            config.append(f'model_providers.{pid}.env_key="OPENAI_API_KEY"')
        return [arg for c in config for arg in ("-c", c)]

    def _args(self, out_dir: Path, sandbox: str, writable_dirs: Sequence[Path] = ()) -> list[str]:
        args = [self._resolved_executable(), "exec", *self._provider_args()]
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
            # One event per line on stdout: progress, usage, errors.
            "--json",
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

    def is_progress(self, line: str) -> bool:
        # A reconnect notice is an `error` event: waiting, not working.
        events = json_lines(line)
        return bool(events) and str(events[0].get("type", "")).startswith(
            ("item.", "turn.", "thread."))

    def reply(self, run: CLIRun, out: Folder) -> Completion:
        events = json_lines(run.stdout)
        failed = [e for e in events if e.get("type") == "turn.failed"]
        if failed:
            error = failed[-1].get("error") or {}
            raise TransientError(f"codex turn failed: {error.get('message', error)}")
        # The last-message file is exactly the final reply; the last
        # agent_message event holds the same text and is the fallback. The
        # file is in a folder the agent can write: taken as hostile_fs takes
        # any (a link to a secret is refused, not read).
        try:
            text = out.read(self.last_message_file, MAX_REPLY_BYTES).decode("utf-8", "replace")
        except HostileEntry as exc:
            if exc.errno != errno.ENOENT:
                raise TransientError(f"codex's last message: {exc}") from None
            text = _last_agent_message(events)
        return Completion(text=text, usage=_codex_usage(events))


def _last_agent_message(events: Sequence[Mapping[str, Any]]) -> str:
    for event in reversed(events):
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "agent_message":
            return str(item.get("text", ""))
    return ""


def _codex_usage(events: Sequence[Mapping[str, Any]]) -> Usage:
    """Summed over the run's turns; input_tokens includes the cached ones."""
    total = Usage()
    for event in events:
        if event.get("type") != "turn.completed":
            continue
        usage = event.get("usage") or {}
        total += Usage.with_cached_input(usage.get("input_tokens"),
                                         usage.get("cached_input_tokens"),
                                         usage.get("output_tokens"))
    return total


AGENT_CLIS: dict[str, type[AgentCLIBackend]] = {
    "claude": ClaudeCLIBackend,
    "codex": CodexCLIBackend,
}


def cli_missing_login(tool: str, path: str, env: Mapping[str, str]) -> str | None:
    """Why the agent CLI `tool` installed at `path` cannot reach its
    service with the environment `env` (see `AgentCLIBackend.missing_login`)."""
    return AGENT_CLIS[tool].missing_login(path, env)
