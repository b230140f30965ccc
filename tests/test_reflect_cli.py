"""The claude / codex back-ends against fake command-line programs.

The fakes are small Python scripts that take the real tools' command lines
(rejecting flags the real tools do not have), read the prompt from stdin the
way the real tools do, and print the real output formats: `claude -p
--output-format stream-json --verbose` one JSON event per line ending in the
`result` event, `codex exec --json -o FILE -` JSONL events (usage in
`turn.completed`) and the last message into FILE. Each call does the next
scripted action and logs its argv, stdin, cwd and environment.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.reflect.base import BackendOptions, PromptParts, RetryPolicy
from routesim_evolve.reflect.cli_backend import (
    CANDIDATE_FILE,
    INSTRUCTIONS_FILE,
    AgentCLIBackend,
    ClaudeCLIBackend,
    CodexCLIBackend,
    claude_result,
)
from routesim_evolve.reflect.errors import BackendUnavailable, ProposalFailed, TransientError
from routesim_evolve.reflect.extract import find_gofmt
from routesim_evolve.reflect.jail import AgentJail
from routesim_evolve.reflect.reply import propose

GO_FILE = "package main\n\nfunc helper() int { return 1 }\n"
NEW_GO_FILE = "package main\n\nfunc helper() int { return 2 }\n"
GOOD_REPLY = f"Changed the weights.\n\n```go\n{GO_FILE}```\n"
PROMPT = PromptParts(static="OBJECTIVE AND CONTRACT", dynamic="CURRENT CANDIDATE + FEEDBACK")

FAKE = r'''#!{python} -S
"""A stand-in for the real `{tool}` CLI."""
import json, os, subprocess, sys, time
from pathlib import Path

TOOL = "{tool}"
HERE = Path({here!r})
GRANDCHILD = "grandchild-" + str(HERE)
ACTIONS = json.loads((HERE / "actions.json").read_text())

def fail(msg, code=2):
    sys.stderr.write("error: " + msg + "\n")
    sys.exit(code)

def parse_claude(argv):
    opts, i = {{"allowedTools": [], "add-dir": []}}, 0
    takes_value = {{"--output-format", "--model", "--effort", "--permission-mode", "--add-dir"}}
    while i < len(argv):
        a = argv[i]
        if a in ("-p", "--print"):
            opts["print"] = True
        elif a == "--verbose":
            opts["verbose"] = True
        elif a in takes_value:
            key = a[2:]
            if key == "add-dir":
                opts[key].append(argv[i + 1])
            else:
                opts[key] = argv[i + 1]
            i += 1
        elif a == "--allowedTools":
            while i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                opts["allowedTools"].append(argv[i + 1]); i += 1
        elif a.startswith("-"):
            fail("unknown option '" + a + "'", 1)
        else:
            opts["prompt_arg"] = a
        i += 1
    if not opts.get("print"):
        fail("this fake only runs in print mode")
    if opts.get("output-format") == "stream-json" and not opts.get("verbose"):
        fail("When using --print, --output-format=stream-json requires --verbose", 1)
    return opts

def parse_codex(argv):
    if not argv or argv[0] != "exec":
        fail("expected the exec subcommand")
    opts, i = {{"c": [], "add-dir": []}}, 1
    takes_value = {{"--model": "model", "-m": "model", "--sandbox": "sandbox", "-s": "sandbox",
                   "--color": "color", "--output-last-message": "o", "-o": "o"}}
    flags = {{"--skip-git-repo-check", "--ephemeral", "--json"}}
    while i < len(argv):
        a = argv[i]
        if a in takes_value:
            opts[takes_value[a]] = argv[i + 1]; i += 1
        elif a in ("-c", "--config"):
            opts["c"].append(argv[i + 1]); i += 1
        elif a == "--add-dir":
            opts["add-dir"].append(argv[i + 1]); i += 1
        elif a in flags:
            opts[a[2:]] = True
        elif a.startswith("-") and a != "-":
            fail("unexpected argument '" + a + "' found")
        else:
            opts["prompt_arg"] = a
        i += 1
    return opts

argv = sys.argv[1:]
opts = parse_claude(argv) if TOOL == "claude" else parse_codex(argv)
# Both tools read the prompt from stdin when none is given as an argument
# (codex when the argument is "-").
prompt = sys.stdin.read() if opts.get("prompt_arg", "-") == "-" else opts["prompt_arg"]
log_path = HERE / "calls.json"
calls = json.loads(log_path.read_text()) if log_path.exists() else []
cwd = Path.cwd()
instructions = cwd / "INSTRUCTIONS.md"
calls.append({{
    "argv": argv, "opts": opts, "stdin": prompt, "cwd": str(cwd), "env": dict(os.environ),
    "files": sorted(p.name for p in cwd.iterdir()),
    "instructions": instructions.read_text() if instructions.exists() else None,
}})
log_path.write_text(json.dumps(calls))
kind, arg = ACTIONS[min(len(calls), len(ACTIONS)) - 1]

if kind == "hang":
    # Named by its argument: its pid in the jail's namespace means nothing outside.
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", GRANDCHILD])
    time.sleep(120)
if kind == "exit":
    sys.stderr.write("API Error: 529 Overloaded\n")
    sys.exit(arg)
if kind == "edit":
    (cwd / "candidate_impl.go").write_text(arg)
    arg = "I edited candidate_impl.go."

SESSION = "0e639165-79b1-4bd4-bb0f-4cb4c15115d4"
if TOOL == "claude":
    is_error = kind == "is_error"
    result = {{
        "type": "result", "subtype": "error_during_execution" if is_error else "success",
        "is_error": is_error, "duration_ms": 12, "duration_api_ms": 10, "num_turns": 1,
        "result": arg, "session_id": SESSION, "total_cost_usd": 0.0123,
        "usage": {{"input_tokens": 3, "cache_creation_input_tokens": 5000,
                   "cache_read_input_tokens": 12000, "output_tokens": 600,
                   "service_tier": "standard"}},
    }}
    if opts.get("output-format") == "stream-json":
        print(json.dumps({{"type": "system", "subtype": "init", "cwd": str(cwd),
                           "session_id": SESSION, "tools": ["Read", "Edit"],
                           "model": opts.get("model", "claude-opus-4-7")}}), flush=True)
        print(json.dumps({{"type": "assistant", "session_id": SESSION, "message": {{
            "id": "msg_01", "type": "message", "role": "assistant", "model": "m",
            "content": [{{"type": "text", "text": arg}}], "stop_reason": None,
            "usage": {{"input_tokens": 3, "output_tokens": 600}}}}}}), flush=True)
    print(json.dumps(result))
else:
    Path(opts["o"]).write_text(arg)
    if opts.get("json"):
        for event in (
            {{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}},
            {{"type": "turn.started"}},
            {{"type": "item.completed", "item": {{"id": "item_0", "type": "reasoning",
                                                 "text": "**Reading the candidate**"}}}},
            {{"type": "item.completed", "item": {{"id": "item_1", "type": "agent_message",
                                                 "text": arg}}}},
            {{"type": "turn.completed", "usage": {{"input_tokens": 24763,
                                                  "cached_input_tokens": 24448,
                                                  "output_tokens": 122}}}},
        ):
            print(json.dumps(event), flush=True)
    else:
        sys.stderr.write("OpenAI Codex (research preview)\n--------\nthinking...\n")
        print(arg)
'''


# Every agent CLI runs in its jail, with HOME in the test's folder.
pytestmark = pytest.mark.usefixtures("agent_home")


class Fake:
    """A fake CLI in its own directory, its scripted actions and call log.
    The directory is in the tool's own state folder (~/.claude, ~/.codex,
    with HOME at root/home): the one folder besides its work dir that the
    jail lets it write."""

    def __init__(self, root: Path, tool: str, actions: list[tuple[str, Any]]) -> None:
        self.dir = root / "home" / f".{tool}" / f"fake-{tool}"
        self.dir.mkdir(parents=True)
        (self.dir / "actions.json").write_text(json.dumps(actions))
        self.path = self.dir / tool
        self.path.write_text(FAKE.format(python=sys.executable, tool=tool, here=str(self.dir)))
        self.path.chmod(0o755)

    @property
    def jail(self) -> AgentJail:
        """The default jail, with the fake's folder writable for its log."""
        return AgentJail(hidden=(cache_root(),), shared=(self.dir,))

    @property
    def grandchild_gone(self) -> bool:
        """Whether the process the `hang` action started is gone."""
        return _gone(f"grandchild-{self.dir}")

    @property
    def calls(self) -> list[dict[str, Any]]:
        log = self.dir / "calls.json"
        return json.loads(log.read_text()) if log.exists() else []


def make(
    cls: type[AgentCLIBackend],
    fake: Fake,
    *,
    model: str | None = "some-model",
    effort: str | None = "high",
    timeout: float = 30.0,
    sleeps: list[float] | None = None,
    tries: int = 3,
    scratch_root: Path | None = None,
) -> AgentCLIBackend:
    recorded = sleeps if sleeps is not None else []
    return cls(
        model,
        effort,
        executable=str(fake.path),
        options=BackendOptions(agent_timeout=timeout, idle_timeout=timeout),
        scratch_root=scratch_root,
        retry=RetryPolicy(max_tries=tries, base_delay=1.0, max_delay=30.0, jitter=0.0),
        sleep=recorded.append,
        jail=fake.jail,
    )


BACKENDS = [ClaudeCLIBackend, CodexCLIBackend]


def tool_of(cls: type[AgentCLIBackend]) -> str:
    return cls.tool


# -- single call ------------------------------------------------------------


def test_claude_single_call_command_line_and_reply(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "claude", [("reply", GOOD_REPLY)])
    assert propose(make(ClaudeCLIBackend, fake), PROMPT) == GO_FILE
    (call,) = fake.calls
    assert call["argv"][:4] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert call["opts"]["model"] == "some-model"
    assert call["opts"]["effort"] == "high"
    assert "prompt_arg" not in call["opts"]  # the prompt went on stdin
    assert call["stdin"].index("OBJECTIVE") < call["stdin"].index("CURRENT CANDIDATE")


def test_codex_single_call_command_line_and_reply(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "codex", [("reply", GOOD_REPLY)])
    assert propose(make(CodexCLIBackend, fake, effort="medium"), PROMPT) == GO_FILE
    (call,) = fake.calls
    opts = call["opts"]
    assert call["argv"][0] == "exec" and call["argv"][-1] == "-"
    assert opts["model"] == "some-model"
    assert opts["c"] == ['model_reasoning_effort="medium"']
    assert opts["sandbox"] == "read-only"
    assert opts["skip-git-repo-check"] and opts["ephemeral"] and opts["json"]
    # The reply is read from the last-message file, which lives outside the
    # agent's work dir.
    assert not opts["o"].startswith(call["cwd"])
    assert call["stdin"].startswith("OBJECTIVE AND CONTRACT")


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_no_model_or_effort_leaves_the_tool_defaults(
    tmp_path: Path, cls: type[AgentCLIBackend]
) -> None:
    fake = Fake(tmp_path, cls.tool, [("reply", GOOD_REPLY)])
    make(cls, fake, model=None, effort=None).complete(PROMPT)
    argv = fake.calls[0]["argv"]
    assert "--model" not in argv and "--effort" not in argv and "-c" not in argv


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_runs_in_a_scratch_dir_with_a_scrubbed_environment(
    tmp_path: Path, cls: type[AgentCLIBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai")
    monkeypatch.setenv("ROUTESIM_DB_PASSWORD", "secret")
    fake = Fake(tmp_path, cls.tool, [("reply", GOOD_REPLY)])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    make(cls, fake, scratch_root=scratch).complete(PROMPT)
    call = fake.calls[0]
    env = call["env"]
    assert "ROUTESIM_DB_PASSWORD" not in env
    assert env["PATH"] and env["HOME"]
    if cls is ClaudeCLIBackend:
        assert env["ANTHROPIC_API_KEY"] == "sk-ant" and "OPENAI_API_KEY" not in env
        assert env["DISABLE_AUTOUPDATER"] == "1"
    else:
        assert env["OPENAI_API_KEY"] == "sk-oai" and "ANTHROPIC_API_KEY" not in env
    assert Path(call["cwd"]).is_relative_to(scratch)
    assert list(scratch.iterdir()) == []  # cleaned up afterwards


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_garbage_reply_gets_one_follow_up(tmp_path: Path, cls: type[AgentCLIBackend]) -> None:
    fake = Fake(
        tmp_path, cls.tool, [("reply", "I would lower the fee weight."), ("reply", GOOD_REPLY)]
    )
    assert propose(make(cls, fake), PROMPT) == GO_FILE
    second = fake.calls[1]["stdin"]
    assert second.startswith("OBJECTIVE AND CONTRACT")
    assert "I would lower the fee weight." in second
    assert "```go" in second


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_garbage_twice_is_proposal_failed(tmp_path: Path, cls: type[AgentCLIBackend]) -> None:
    fake = Fake(tmp_path, cls.tool, [("reply", "no code here")])
    with pytest.raises(ProposalFailed, match="package main"):
        propose(make(cls, fake), PROMPT)
    assert len(fake.calls) == 2


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_timeout_kills_the_process_group_and_is_retried(
    tmp_path: Path, cls: type[AgentCLIBackend]
) -> None:
    sleeps: list[float] = []
    fake = Fake(tmp_path, cls.tool, [("hang", None), ("reply", GOOD_REPLY)])
    assert propose(make(cls, fake, timeout=2.0, sleeps=sleeps), PROMPT) == GO_FILE
    assert len(fake.calls) == 2
    assert sleeps == [1.0]
    assert fake.grandchild_gone


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_non_zero_exit_is_retried_with_backoff(tmp_path: Path, cls: type[AgentCLIBackend]) -> None:
    sleeps: list[float] = []
    fake = Fake(tmp_path, cls.tool, [("exit", 1), ("exit", 1), ("reply", GOOD_REPLY)])
    assert propose(make(cls, fake, sleeps=sleeps), PROMPT) == GO_FILE
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_persistent_failure_is_proposal_failed(tmp_path: Path, cls: type[AgentCLIBackend]) -> None:
    fake = Fake(tmp_path, cls.tool, [("exit", 1)])
    with pytest.raises(ProposalFailed, match=r"gave up after 3 tries.*529 Overloaded"):
        make(cls, fake).complete(PROMPT)
    assert len(fake.calls) == 3


def test_claude_is_error_result_is_retried(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "claude", [("is_error", "API Error: 429"), ("reply", GOOD_REPLY)])
    assert make(ClaudeCLIBackend, fake).complete(PROMPT).text == GOOD_REPLY


def test_missing_program_is_proposal_failed(tmp_path: Path) -> None:
    backend = ClaudeCLIBackend(executable=str(tmp_path / "no-such-claude"))
    with pytest.raises(ProposalFailed, match="cannot start"):
        backend.complete(PROMPT)


def test_the_program_is_found_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Fake(tmp_path, "codex", [("reply", GOOD_REPLY)])
    monkeypatch.setenv("PATH", f"{fake.dir}:/usr/bin:/bin")
    assert CodexCLIBackend(jail=fake.jail).complete(PROMPT).text == GOOD_REPLY


def test_claude_json_is_found_after_stray_output() -> None:
    out = 'warning: something\n{"type": "result", "is_error": false, "result": "hi"}\n'
    assert claude_result(out)["result"] == "hi"
    with pytest.raises(TransientError):
        claude_result("not json at all")


# -- agentic ------------------------------------------------------------------


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_agent_edits_the_candidate_in_its_work_dir(
    tmp_path: Path, cls: type[AgentCLIBackend]
) -> None:
    fake = Fake(tmp_path, cls.tool, [("edit", NEW_GO_FILE)])
    eval_script = tmp_path / "eval-minibatch"
    spool = tmp_path / "spool"
    spool.mkdir()
    done = make(cls, fake).propose_in_workdir(
        PROMPT, GO_FILE, eval_script=eval_script, writable_dirs=[spool],
    )
    code = done.text
    assert code == NEW_GO_FILE
    # What the agent said when done, from its real output shape: its next
    # prompts recall it.
    assert done.said == "I edited candidate_impl.go."
    (call,) = fake.calls
    assert call["files"] == [INSTRUCTIONS_FILE, CANDIDATE_FILE]
    instructions = call["instructions"]
    assert instructions.index("OBJECTIVE") < instructions.index("CURRENT CANDIDATE")
    assert str(eval_script) in instructions
    assert INSTRUCTIONS_FILE in call["stdin"]
    opts = call["opts"]
    assert opts["add-dir"] == [str(spool)]
    # Its temp dir is its own (the rest of /tmp is read-only in the jail).
    assert call["env"]["TMPDIR"].endswith("/out/tmp")
    # The syntax check by gofmt's absolute path, in the words the agent may run.
    check = f"{find_gofmt()} -l -e {CANDIDATE_FILE}"
    assert Path(check.split()[0]).is_absolute() and f"`{check}`" in instructions
    if cls is ClaudeCLIBackend:
        assert opts["permission-mode"] == "acceptEdits"
        assert f"Bash({eval_script}:*)" in opts["allowedTools"]
        # Exactly that command: no gofmt that writes (-w, -r) anywhere else.
        assert f"Bash({check})" in opts["allowedTools"]
        assert not any(t.startswith("Bash(gofmt") for t in opts["allowedTools"])
    else:
        assert opts["sandbox"] == "workspace-write"


def test_each_round_gets_new_folders_and_only_the_candidate_carries_over(
    tmp_path: Path,
) -> None:
    """Each round runs in a work dir and an output dir made for it, holding
    the two files the harness wrote (the hostile cases: test_hostile_agent)."""
    broken = "package main\n\nfunc helper() int {\n"
    fake = Fake(tmp_path, "codex", [("edit", broken), ("edit", NEW_GO_FILE)])
    assert make(CodexCLIBackend, fake).propose_in_workdir(PROMPT, GO_FILE).text == NEW_GO_FILE
    first, second = fake.calls
    assert first["cwd"] != second["cwd"]
    assert Path(first["opts"]["o"]).parent != Path(second["opts"]["o"]).parent
    assert second["files"] == [INSTRUCTIONS_FILE, CANDIDATE_FILE]


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_agent_gets_one_follow_up_for_a_broken_edit(
    tmp_path: Path, cls: type[AgentCLIBackend]
) -> None:
    broken = "package main\n\nfunc helper() int {\n"
    fake = Fake(tmp_path, cls.tool, [("edit", broken), ("edit", NEW_GO_FILE)])
    assert make(cls, fake).propose_in_workdir(PROMPT, GO_FILE).text == NEW_GO_FILE
    follow_up = fake.calls[1]["stdin"]
    assert "does not parse" in follow_up and "candidate_impl.go:3:21" in follow_up


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_agent_that_changes_nothing_fails_the_proposal(
    tmp_path: Path, cls: type[AgentCLIBackend]
) -> None:
    fake = Fake(tmp_path, cls.tool, [("reply", "Looks fine to me.")])
    with pytest.raises(ProposalFailed, match="unchanged"):
        make(cls, fake).propose_in_workdir(PROMPT, GO_FILE)
    assert len(fake.calls) == 2


def test_agent_timeout_is_retried_from_the_rounds_start(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "claude", [("hang", None), ("edit", NEW_GO_FILE)])
    backend = make(ClaudeCLIBackend, fake, timeout=2.0)
    assert backend.propose_in_workdir(PROMPT, GO_FILE).text == NEW_GO_FILE
    assert len(fake.calls) == 2


def _gone(token: str, within: float = 5.0) -> bool:
    """Whether every process with `token` among its arguments dies within a
    few seconds: SIGKILL is delivered at once but acted on asynchronously,
    later on a busy machine."""
    deadline = time.monotonic() + within
    while _running(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running(token: str) -> bool:
    """Whether a live process (a zombie waiting for its reaper counts as
    dead) has `token` as an argument."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            status = (proc / "status").read_text()
        except OSError:
            continue
        if token.encode() in args:
            state = next(line for line in status.splitlines() if line.startswith("State:"))
            if "Z" not in state.split()[1]:
                return True
    return False


def test_agent_that_deletes_the_file_gets_it_back_for_the_follow_up(tmp_path: Path) -> None:
    script = tmp_path / "agent-rm"
    script.write_text(
        f"#!{sys.executable} -S\n"
        "import sys, pathlib\n"
        "sys.stdin.read()\n"
        # Its count in its state folder: the one it may write in the jail.
        "log = pathlib.Path.home() / '.claude' / 'agent-rm.n'\n"
        "n = int(log.read_text()) + 1 if log.exists() else 1\n"
        "log.write_text(str(n))\n"
        "target = pathlib.Path('candidate_impl.go')\n"
        "if n == 1:\n"
        "    target.unlink()\n"
        "else:\n"
        f"    assert target.read_text() == {GO_FILE!r}\n"
        f"    target.write_text({NEW_GO_FILE!r})\n"
        'print(\'{"type": "result", "is_error": false, "result": "done"}\')\n'
    )
    script.chmod(0o755)
    backend = ClaudeCLIBackend(executable=str(script), retry=RetryPolicy(max_tries=1))
    assert backend.propose_in_workdir(PROMPT, GO_FILE).text == NEW_GO_FILE


# -- progress, usage, base URL, preflight ------------------------------------


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_usage_is_read_from_the_event_stream(tmp_path: Path, cls: type[AgentCLIBackend]) -> None:
    fake = Fake(tmp_path, cls.tool, [("reply", GOOD_REPLY)])
    usage = make(cls, fake).complete(PROMPT).usage
    if cls is ClaudeCLIBackend:
        # Claude Code prices its own replies: its figure is kept.
        assert usage.reported_cost_usd == 0.0123
        assert (usage.cache_write_tokens, usage.cache_read_tokens) == (5000, 12000)
    else:
        assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (
            315, 24448, 122)


def test_an_agent_silent_past_the_idle_timeout_is_stopped_early(tmp_path: Path) -> None:
    """Not the whole-run limit: a silent agent is stopped after idle_timeout."""
    fake = Fake(tmp_path, "codex", [("hang", None)])
    backend = CodexCLIBackend(
        executable=str(fake.path), retry=RetryPolicy(max_tries=1),
        options=BackendOptions(agent_timeout=60.0, idle_timeout=1.5), jail=fake.jail,
    )
    with pytest.raises(ProposalFailed, match="no progress for 2s"):
        backend.complete(PROMPT)
    assert fake.grandchild_gone


def test_codex_reconnect_notices_are_not_progress() -> None:
    backend = CodexCLIBackend()
    assert backend.is_progress('{"type":"item.completed","item":{"type":"reasoning"}}\n')
    assert not backend.is_progress('{"type":"error","message":"Reconnecting... 2/5"}\n')
    assert not backend.is_progress("OpenAI Codex v0.171.0\n")


def test_codex_gets_the_base_url_through_its_own_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """codex ignores OPENAI_BASE_URL: the URL goes in as a provider of ours."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8123/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai")
    fake = Fake(tmp_path, "codex", [("reply", GOOD_REPLY)])
    make(CodexCLIBackend, fake, effort=None).complete(PROMPT)
    config = fake.calls[0]["opts"]["c"]
    assert 'model_provider="routesim"' in config
    assert 'model_providers.routesim.base_url="http://127.0.0.1:8123/v1"' in config
    assert 'model_providers.routesim.wire_api="responses"' in config
    assert 'model_providers.routesim.env_key="OPENAI_API_KEY"' in config


def test_claude_gets_a_base_url_as_its_variable(tmp_path: Path) -> None:
    fake = Fake(tmp_path, "claude", [("reply", GOOD_REPLY)])
    backend = ClaudeCLIBackend(executable=str(fake.path), base_url="http://127.0.0.1:8124",
                               jail=fake.jail)
    backend.complete(PROMPT)
    assert fake.calls[0]["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8124"


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_preflight_names_the_missing_program_and_how_to_install_it(
    tmp_path: Path, cls: type[AgentCLIBackend]
) -> None:
    backend = cls(executable=str(tmp_path / f"no-such-{cls.tool}"))
    with pytest.raises(BackendUnavailable, match=r"not on PATH; install .*npm install"):
        backend.preflight()


def _status_script(tmp_path: Path, tool: str, signed_in: bool) -> Path:
    """A stand-in answering `--version` and the tool's sign-in status the
    way the real one does (claude prints JSON, codex a line; exit 1 when
    signed out)."""
    said = '{"loggedIn": false, "authMethod": "none"}' if tool == "claude" else "Not logged in"
    path = tmp_path / tool
    path.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "{tool} 1.0"; exit 0; }}\n'
                    f'[ "$2" = status ] && {{ echo \'{said}\'; exit {0 if signed_in else 1}; }}\n'
                    "exit 2\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("cls", BACKENDS, ids=tool_of)
def test_preflight_refuses_a_signed_out_agent_and_says_how_to_sign_in(
    tmp_path: Path, cls: type[AgentCLIBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in (*cls.credential_env, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    path = _status_script(tmp_path, cls.tool, signed_in=False)
    with pytest.raises(BackendUnavailable, match=rf"not signed in \(`{cls.tool} \w+ status`: .+"
                                                 rf"\); {re.escape(cls.login_hint)}"):
        cls(executable=str(path)).preflight()
    # A key stands in for the login, and for codex a base URL does too;
    # claude with a base URL still wants a key ("Not logged in" otherwise).
    at_url = cls(executable=str(path), base_url="http://127.0.0.1:9")
    if cls.endpoint_needs_login:
        with pytest.raises(BackendUnavailable, match="with a base URL, any value"):
            at_url.preflight()
    else:
        at_url.preflight()
    monkeypatch.setenv(cls.credential_env[0], "sk-test")
    cls(executable=str(path), base_url="http://127.0.0.1:9").preflight()
    cls(executable=str(path)).preflight()
    monkeypatch.delenv(cls.credential_env[0])
    (tmp_path / "in").mkdir()
    cls(executable=str(_status_script(tmp_path / "in", cls.tool, signed_in=True))).preflight()
