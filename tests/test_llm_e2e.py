"""One evolution per back-end, end to end, as a user runs it: the main
command in a subprocess, its LM a local fake server speaking the real API
(or a fake agent CLI printing the real tool's output), whose reply carries
a better router than the seed. The proposal must be accepted, become the
best candidate, and its cost must be reported.

The seed is the in-tree router handicapped to direct channels; the "LM"
answers with the in-tree router, which is far better on every tiny-corpus
scenario. The hidden worlds are fixed (--world-secret), so that a run is
the same every time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from fake_llm_server import Answer, FakeLLMServer, Request
from repo_files import REPO, SEED_PATH, unavailable

SEED = SEED_PATH.read_text()
# Direct channels only: worse than the in-tree router on many payments of
# every scenario, so that the improvement passes the paired acceptance rule
# (evolve/acceptance.py) in any world, not one payment's worth of it.
HANDICAPPED = SEED.replace("maxHops = 20 ", "maxHops = 1 ")
# The same hidden worlds at every run of the suite.
WORLD_SECRET = "e2" * 32
REPLY = f"Allow longer routes again.\n\n```go\n{SEED}```\n"
MODELS = ("claude-opus-4-7", "gpt-5.5", "qwen2.5-coder:32b")

FAKE_AGENT = r'''#!{python} -S
"""A stand-in for the `{tool}` CLI: edits candidate_impl.go, prints the
real tool's JSON events."""
import json, sys
from pathlib import Path
argv = sys.argv[1:]
if "--version" in argv:
    print("{tool} 0.0.0-fake"); sys.exit(0)
if argv[1:2] == ["status"]:  # `claude auth status`, `codex login status`
    print("Logged in using ChatGPT"); sys.exit(0)
sys.stdin.read()
Path("candidate_impl.go").write_text(Path({improved!r}).read_text())
if "{tool}" == "claude":
    print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s"}}), flush=True)
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
                      "result": "Allowed longer routes.", "session_id": "s",
                      "total_cost_usd": 0.0421,
                      "usage": {{"input_tokens": 10, "output_tokens": 900,
                                "cache_creation_input_tokens": 8000,
                                "cache_read_input_tokens": 0}}}}))
else:
    out = argv[argv.index("--output-last-message") + 1]
    Path(out).write_text("Allowed longer routes.")
    for event in ({{"type": "thread.started", "thread_id": "t"}}, {{"type": "turn.started"}},
                  {{"type": "item.completed", "item": {{"id": "item_0", "type": "agent_message",
                                                       "text": "Allowed longer routes."}}}},
                  {{"type": "turn.completed", "usage": {{"input_tokens": 9000,
                                                        "cached_input_tokens": 0,
                                                        "output_tokens": 800}}}}):
        print(json.dumps(event), flush=True)
'''


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(lambda r: Answer(text=REPLY), models=MODELS) as fake:
        yield fake


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(extra)
    return env


def _evolve(tiny_corpus: Path, tmp_path: Path, lm: str, env: dict[str, str],
            *more: str) -> subprocess.CompletedProcess[str]:
    seed = tmp_path / "handicapped.go"
    seed.write_text(HANDICAPPED)
    # The back-ends are under test, not the rule: the paired rule keeps the
    # reply's improvement on the tiny corpus's minibatch within 12
    # evaluations, where the run's sequential rule would need 8 observations
    # (its copies of the 2 train scenarios) before keeping anything.
    return subprocess.run(
        [sys.executable, "-m", "routesim_evolve", "--corpus", str(tiny_corpus),
         "--seed-file", str(seed), "--runs", str(tmp_path), "--name", "run",
         "--reflection-lm", lm, "--max-proposals", "1", "--max-evals", "12",
         "--max-concurrency", "2", "--world-secret", WORLD_SECRET, "--acceptance", "paired",
         *more],
        cwd=REPO, capture_output=True, text=True, timeout=900, env=env,
    )


def _events(run_dir: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in (run_dir / "log.jsonl").read_bytes().splitlines()]


def _assert_improvement_accepted_and_reported(run: subprocess.CompletedProcess[str],
                                              run_dir: Path, cost: str) -> None:
    assert run.returncode == 0, run.stderr[-3000:]
    kinds = [e["event"] for e in _events(run_dir)]
    assert "accepted" in kinds, kinds
    assert (run_dir / "best.go").read_text() == SEED
    val = re.search(r"^Val score: (0\.\d{4}) \(seed (0\.\d{4})\)$", run.stdout, re.M)
    assert val and float(val.group(1)) > float(val.group(2))
    report = (run_dir / "report.md").read_text()
    assert re.search(cost, report), report[:600]
    usage = [e for e in _events(run_dir) if e["event"] == "lm_usage"]
    assert usage and all(int(e["output_tokens"]) > 0 for e in usage)


@pytest.mark.parametrize(
    "lm,key,cost",
    [
        # Priced by the bundled table: 12 + 340 tokens of claude-opus-4-7.
        ("anthropic:claude-opus-4-7:high@{url}", "ANTHROPIC_API_KEY", r"LM cost: \$0\.01"),
        # No price for gpt-5.5: counted in tokens, flagged, never $0.
        ("openai:gpt-5.5:high@{url}/v1", "OPENAI_API_KEY", r"unpriced replies of openai"),
        ("openai-compatible:qwen2.5-coder:32b@{url}/v1", "", r"unpriced replies of openai-comp"),
    ],
    ids=["anthropic", "openai", "openai-compatible"],
)
def test_api_back_end_evolves_a_better_router(
    tiny_corpus: Path, tmp_path: Path, server: FakeLLMServer, lm: str, key: str, cost: str
) -> None:
    before = len(server.requests)
    env = _env(tmp_path, **({key: "sk-test"} if key else {}))
    run = _evolve(tiny_corpus, tmp_path, lm.format(url=server.url), env)
    _assert_improvement_accepted_and_reported(run, tmp_path / "run", cost)
    mine = server.requests[before:]
    assert mine[0].method == "GET", "the preflight check comes first"
    posts = [r for r in mine if r.method == "POST"]
    assert posts and all(r.body.get("stream") is True for r in posts)
    assert "maxHops = 1 " in orjson.dumps(posts[0].body).decode()  # the seed was shown


@pytest.mark.parametrize("tool,cost", [("claude", r"LM cost: \$0\.04"),
                                       ("codex", r"unpriced replies of codex")])
def test_agent_cli_back_end_evolves_a_better_router(
    tiny_corpus: Path, tmp_path: Path, tool: str, cost: str, agent_home: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Beside the fake, whose folder the jail shows it (/tmp is its own).
    improved = bin_dir / "improved.go"
    improved.write_text(SEED)
    fake = bin_dir / tool
    fake.write_text(FAKE_AGENT.format(python=sys.executable, tool=tool, improved=str(improved)))
    fake.chmod(0o755)
    env = _env(tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    run = _evolve(tiny_corpus, tmp_path, tool, env)
    _assert_improvement_accepted_and_reported(run, tmp_path / "run", cost)


def test_a_missing_key_stops_the_run_before_it_starts(tiny_corpus: Path, tmp_path: Path) -> None:
    run = _evolve(tiny_corpus, tmp_path, "anthropic:claude-opus-4-7", _env(tmp_path))
    assert run.returncode == 2, run.stderr[-2000:]
    assert "set ANTHROPIC_API_KEY" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "run" / "evals").exists(), "nothing was evaluated"


def test_a_refused_key_stops_the_run_with_a_clear_error(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    def refuse(request: Request) -> Answer:
        body = {"type": "error", "error": {"type": "permission_error",
                                           "message": "your key cannot use this model"}}
        return Answer(status=403, error=body)

    with FakeLLMServer(refuse, models=MODELS) as refusing:
        run = _evolve(tiny_corpus, tmp_path, f"anthropic:claude-opus-4-7@{refusing.url}",
                      _env(tmp_path, ANTHROPIC_API_KEY="sk-test"), "--max-proposals", "10",
                      "--max-evals", "60")
        posts = refusing.posts("/v1/messages")
    assert run.returncode == 3, run.stderr[-2000:]
    assert "3 proposals in a row failed" in run.stderr
    assert "your key cannot use this model" in run.stderr
    assert "--name run to resume" in run.stderr
    assert len(posts) == 3, "no retries for a refusal, and no fourth proposal"


def test_max_cost_stops_the_run_cleanly(tiny_corpus: Path, tmp_path: Path,
                                        server: FakeLLMServer) -> None:
    run = _evolve(tiny_corpus, tmp_path, f"anthropic:claude-opus-4-7@{server.url}",
                  _env(tmp_path, ANTHROPIC_API_KEY="sk-test"), "--max-cost", "0.001",
                  "--max-proposals", "10", "--max-evals", "60")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Stopped at the cost limit" in run.stderr
    costs = [e for e in _events(tmp_path / "run") if e["event"] == "lm_usage"]
    assert len(costs) == 1, "one reply crossed the limit; no second one was asked for"


def test_max_cost_refuses_a_model_it_cannot_price(tiny_corpus: Path, tmp_path: Path,
                                                  server: FakeLLMServer) -> None:
    run = _evolve(tiny_corpus, tmp_path, f"openai:gpt-5.5@{server.url}/v1",
                  _env(tmp_path, OPENAI_API_KEY="sk-test"), "--max-cost", "5")
    assert run.returncode == 2, run.stderr[-2000:]
    assert "--max-cost cannot see what openai:gpt-5.5 costs" in run.stderr
    prices = tmp_path / "prices.json"
    prices.write_text('{"format": "routesim-prices/1", "models": '
                      '{"gpt-5.5": {"input": 5.0, "output": 30.0, "cache_read": 0.5}}}')
    run = _evolve(tiny_corpus, tmp_path, f"openai:gpt-5.5@{server.url}/v1",
                  _env(tmp_path, OPENAI_API_KEY="sk-test"), "--max-cost", "5",
                  "--prices", str(prices))
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(r"LM cost: \$0\.01", (tmp_path / "run" / "report.md").read_text())


def _real_codex() -> str:
    """The real codex on PATH (npm install @openai/codex): skipped without
    it, except in CI, where .ci/run installs it and its absence is a failure."""
    path = shutil.which("codex")
    if path is None:
        unavailable("the real codex CLI is not on PATH (npm install @openai/codex)")
    return path


def _one_reply_through(backend, server: FakeLLMServer, path: str) -> None:
    """The backend's one reply comes from the local server, in one request."""
    from routesim_evolve.reflect.base import PromptParts

    before = len(server.posts(path))
    reply = backend.complete(PromptParts(static="S", dynamic="D"))
    assert reply.text == REPLY
    assert reply.usage.output_tokens > 0
    assert len(server.posts(path)) == before + 1


def test_the_real_codex_cli_reaches_a_base_url_through_its_configuration(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, agent_home: Path
) -> None:
    """codex ignores OPENAI_BASE_URL; with our provider entry the real CLI
    talks to the local server, from its jail. Needs the real codex (npm
    install @openai/codex)."""
    from routesim_evolve.reflect.base import BackendOptions, RetryPolicy
    from routesim_evolve.reflect.cli_backend import CodexCLIBackend

    _real_codex()
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "codex-home").mkdir()
    _one_reply_through(CodexCLIBackend("gpt-5.5", base_url=f"{server.url}/v1",
                                       options=BackendOptions(idle_timeout=30, agent_timeout=120),
                                       retry=RetryPolicy(max_tries=1)), server, "/responses")


def test_the_real_claude_cli_answers_from_its_jail(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, agent_home: Path
) -> None:
    """Claude Code runs in the agents' jail (the system, its install and a
    private home; nothing of the user's) and reaches the local server at its
    base URL. Needs the real claude (npm install @anthropic-ai/claude-code)."""
    from routesim_evolve.reflect.base import BackendOptions, RetryPolicy
    from routesim_evolve.reflect.cli_backend import ClaudeCLIBackend

    if shutil.which("claude") is None:
        unavailable("the real claude CLI is not on PATH (npm install @anthropic-ai/claude-code)")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    _one_reply_through(ClaudeCLIBackend("claude-opus-4-7", base_url=server.url,
                                        options=BackendOptions(idle_timeout=60,
                                                               agent_timeout=120),
                                        retry=RetryPolicy(max_tries=1)),
                       server, "/messages?beta=true")
    # It kept its state in its private home: the user's gained nothing.
    assert not (agent_home / ".claude").exists()
    assert not (agent_home / ".claude.json").exists()


def test_a_signed_out_real_codex_is_refused_before_the_run_and_never_picked_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A codex installed but never signed in (a fresh CODEX_HOME, no key)
    would reconnect until its idle timeout every iteration: preflight
    refuses it, and the main job, given no --reflection-lm, runs offline."""
    from routesim_evolve.reflect.cli_backend import CodexCLIBackend
    from routesim_evolve.reflect.errors import BackendUnavailable
    from routesim_evolve.reflect.spec import detect_default

    path = _real_codex()
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "codex-home").mkdir()
    for key in ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(BackendUnavailable, match=r"codex: not signed in .*run `codex login`"):
        CodexCLIBackend().preflight()
    monkeypatch.setenv("PATH", str(Path(path).parent))
    choice = detect_default()
    assert choice.spec.kind == "offline"
    assert "the codex CLI at" in choice.reason and "not signed in" in choice.reason
