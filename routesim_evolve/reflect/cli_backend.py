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

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.build.source import NotSourceText, read_source
from routesim_evolve.layout import PROJECT_ROOT
from routesim_evolve.reflect.base import PlumbedBackend, Plumbing, PromptParts
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
    f"router by editing {CANDIDATE_FILE} in place. When you are done, reply with one line "
    "saying what you changed and why: your next tasks recall it, with how the change fared."
)


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
        self.name = ":".join(p for p in (self.tool, model, effort) if p)
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

    def reply(self, run: CLIRun, out_dir: Path) -> Completion:
        """The reply text and usage one finished run left."""
        raise NotImplementedError

    def is_progress(self, line: str) -> bool:
        """Whether a line of the tool's stdout shows the agent is working."""
        return bool(line.strip())

    def tool_env(self) -> dict[str, str]:
        """Variables this tool needs set for the spec (e.g. a base URL)."""
        return {}

    def state_paths(self) -> list[Path]:
        """The tool's own files (login, settings, sessions), which it must
        write inside the jail; made when missing."""
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
        with self._scratch() as (work, out):
            run = self._run(self.single_call_args(out), text, work, out)
            return self._charged(self.reply(run, out))

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
        workdir: Path | None = None,
        writable_dirs: Sequence[Path] = (),
    ) -> Completion:
        """Let the agent edit `candidate` in a work dir; the completion's text
        is the file it leaves. `eval_script`, if given, is a program the
        agent may run there to score its edit on the minibatch;
        `writable_dirs` are the folders that script writes (the evaluation
        server's spool). Raises ProposalFailed when no usable file comes out
        of two rounds."""
        spent = Usage()
        with self._scratch(workdir) as (work, out):
            target = work / CANDIDATE_FILE
            target.write_text(candidate)
            (work / INSTRUCTIONS_FILE).write_text(agent_instructions(prompt, eval_script))
            args = self.agentic_args(out, eval_script, writable_dirs)
            # The eval script's folder, to run it (read-only).
            shown = [eval_script.parent] if eval_script is not None else []
            task = AGENT_TASK
            for _ in range(2):
                result, reply = self._agent_round(args, task, target, candidate, out,
                                                  writable_dirs, shown)
                spent += reply.usage
                if result.ok:
                    return Completion(text=_code(result), usage=spent, said=reply.text)
                task = agent_follow_up(result)
            raise ProposalFailed(f"{self.name}: no usable {CANDIDATE_FILE}: {result.reason}")

    def _agent_round(
        self, args: list[str], task: str, target: Path, original: str, out: Path,
        writable: Sequence[Path], shown: Sequence[Path],
    ) -> tuple[Extraction, Completion]:
        # Bytes, not text: the last round may have left a file that is not
        # UTF-8, which check_candidate refuses and this round starts from.
        start = target.read_bytes() if target.is_file() else original.encode()

        def attempt() -> Completion:
            # A retried run starts from this round's file, not a half-edit.
            target.write_bytes(start)
            run = self._run(args, task, target.parent, out, writable, shown)
            return self._charged(self.reply(run, out))

        reply = self._retrying.run(attempt)
        return check_candidate(target, original), reply

    # -- plumbing ---------------------------------------------------------

    def _env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return scrubbed_env(
            self.env_keys, fixed=self.fixed_env,
            extra={**self.tool_env(), **self._extra_env, **(extra or {})},
        )

    def _run(
        self, args: list[str], stdin: str, cwd: Path, out: Path, writable: Sequence[Path] = (),
        shown: Sequence[Path] = (),
    ) -> CLIRun:
        """The tool run in its jail, in `cwd`, able to write `cwd`, its output
        dir `out` (its temp dir inside), `writable` and its own state, and to
        read `shown` besides what every run needs."""
        if not os.access(args[0], os.X_OK):
            raise ProposalFailed(f"cannot start {args[0]}: no such program", permanent=True)
        state = self.state_paths()
        _make_state(state)
        jailed = self.jail.with_state(*state).command(
            args, writable=[cwd, out, *writable], cwd=cwd,
            visible=[*self._needs(args[0]), *shown])
        return run_cli(
            jailed, stdin=stdin, cwd=cwd, env=self._env({"TMPDIR": str(out / TMP_DIR)}),
            timeout=self.options.agent_timeout, idle_timeout=self.options.idle_timeout,
            is_progress=self.is_progress, name=Path(args[0]).name,
        )

    @staticmethod
    def _needs(executable: str) -> list[Path]:
        """What any tool run needs to read, wherever it lies (a venv or an npm
        prefix may be in /tmp, which the jail empties): its install (an npm
        package's whole prefix), this Python, the project and Go's root."""
        real = Path(executable).resolve()
        install = next((p.parent for p in real.parents if p.name == "node_modules"),
                       real.parent)
        gofmt = find_gofmt()
        return [install, Path(sys.prefix), Path(sys.base_prefix), PROJECT_ROOT,
                *([Path(gofmt).resolve().parents[1]] if gofmt else [])]

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
            (out / TMP_DIR).mkdir(parents=True)
            work = workdir or root / "work"
            work.mkdir(parents=True, exist_ok=True)
            yield work, out


def _make_state(paths: Sequence[Path]) -> None:
    """Make the tool's state folders (a name ending in .json: a file) that
    do not exist yet, so that the jail can bind them writable."""
    for path in paths:
        if path.exists():
            continue
        if path.suffix == ".json":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}\n")
        else:
            path.mkdir(parents=True, exist_ok=True)


def check_candidate(target: Path, original: str) -> Extraction:
    """The file the agent left, if it is a changed, parsing Go file."""
    if not target.is_file():
        return Extraction(reason=f"the agent deleted {CANDIDATE_FILE}")
    try:
        code = read_source(target)
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

    def tool_env(self) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": self.base_url} if self.base_url else {}

    def state_paths(self) -> list[Path]:
        # Claude Code keeps its settings and login in ~/.claude and
        # ~/.claude.json, or both in $CLAUDE_CONFIG_DIR.
        env = self._env()
        if env.get("CLAUDE_CONFIG_DIR"):
            return [Path(env["CLAUDE_CONFIG_DIR"])]
        home = Path(env.get("HOME") or Path.home())
        return [home / ".claude", home / ".claude.json"]

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

    def reply(self, run: CLIRun, out_dir: Path) -> Completion:
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

    def _endpoint(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL")

    def state_paths(self) -> list[Path]:
        # Codex keeps its login, config and logs in $CODEX_HOME (~/.codex).
        env = self._env()
        home = Path(env.get("HOME") or Path.home())
        return [Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"]

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

    def reply(self, run: CLIRun, out_dir: Path) -> Completion:
        events = json_lines(run.stdout)
        failed = [e for e in events if e.get("type") == "turn.failed"]
        if failed:
            error = failed[-1].get("error") or {}
            raise TransientError(f"codex turn failed: {error.get('message', error)}")
        # The last-message file is exactly the final reply; the last
        # agent_message event holds the same text and is the fallback.
        path = out_dir / self.last_message_file
        text = (path.read_text(errors="replace") if path.is_file()
                else _last_agent_message(events))
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
