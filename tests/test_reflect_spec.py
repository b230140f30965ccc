"""`--reflection-lm` parsing and the auto-detected default."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from routesim_evolve.reflect.spec import (
    DEFAULT_MODELS,
    LMSpec,
    LMSpecError,
    detect_default,
    parse_lm_spec,
)


@pytest.mark.parametrize(
    "value,expected",
    [
        ("offline", LMSpec(kind="offline")),
        ("anthropic:claude-opus-4-7", LMSpec(kind="anthropic", model="claude-opus-4-7")),
        (
            "anthropic:claude-opus-4-7:high",
            LMSpec(kind="anthropic", model="claude-opus-4-7", effort="high"),
        ),
        ("openai:gpt-5.5:xhigh", LMSpec(kind="openai", model="gpt-5.5", effort="xhigh")),
        ("codex:gpt-5.5:medium", LMSpec(kind="codex", model="gpt-5.5", effort="medium")),
        ("claude:opus:max", LMSpec(kind="claude", model="opus", effort="max")),
        ("claude", LMSpec(kind="claude")),
        ("claude::low", LMSpec(kind="claude", effort="low")),
        ("anthropic", LMSpec(kind="anthropic", model=DEFAULT_MODELS["anthropic"])),
        # Fine-tune ids hold colons; only a real effort level is split off.
        ("openai:ft:gpt-4o:acme:x1", LMSpec(kind="openai", model="ft:gpt-4o:acme:x1")),
        (
            "openai:ft:gpt-4o:acme:x1:low",
            LMSpec(kind="openai", model="ft:gpt-4o:acme:x1", effort="low"),
        ),
    ],
)
def test_valid_values(value: str, expected: LMSpec) -> None:
    assert parse_lm_spec(value) == expected


@pytest.mark.parametrize(
    "value,message",
    [
        ("gemini:pro", "unknown reflection LM kind 'gemini'"),
        ("", "unknown reflection LM kind"),
        ("anthropic:", "empty model name"),
        ("anthropic:claude-opus-4-7:ultra", "effort 'ultra' is not accepted by anthropic"),
        ("codex:gpt-5.5:none", "effort 'none' is not accepted by codex"),
        ("claude:high", "'high' is an effort level, not a model"),
        ("offline:x", "'offline' takes no model, effort or URL"),
        ("offline@http://127.0.0.1:1", "'offline' takes no model, effort or URL"),
        ("openai-compatible:llama3", "write openai-compatible:MODEL@URL"),
        ("openai-compatible:@http://127.0.0.1:8000/v1", "write openai-compatible:MODEL@URL"),
        ("openai:gpt-5@localhost:8000", "must be an http:// or https:// URL"),
        ("openai:gpt-5@http://", "is not an http:// or https:// URL"),
    ],
)
def test_malformed_values_say_what_is_wrong(value: str, message: str) -> None:
    with pytest.raises(LMSpecError, match=message):
        parse_lm_spec(value)


def test_spec_round_trips_through_str() -> None:
    for value in ("anthropic:claude-opus-4-7:high", "codex:gpt-5.5", "offline", "claude",
                  "claude::max", "codex::max", "codex:gpt-5.5:xhigh", "openai:ft:gpt-4o:org:id"):
        assert str(parse_lm_spec(value)) == value
        assert parse_lm_spec(str(parse_lm_spec(value))) == parse_lm_spec(value)


def tools(*present: str) -> Callable[[str], str | None]:
    return lambda name: f"/usr/bin/{name}" if name in present else None


def signed_in(tool: str, path: str, env: Mapping[str, str]) -> str | None:
    return None


def signed_out(tool: str, path: str, env: Mapping[str, str]) -> str | None:
    return f"not signed in (`{tool} login status`: Not logged in); run `{tool} login`"


def test_anthropic_key_wins() -> None:
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    choice = detect_default(env, tools("claude", "codex"), signed_in)
    assert choice.spec.kind == "anthropic"
    assert "ANTHROPIC_API_KEY" in choice.reason


def test_openai_key_next() -> None:
    choice = detect_default({"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": ""}, tools("claude"),
                            signed_in)
    assert choice.spec.kind == "openai"


def test_claude_cli_before_codex() -> None:
    choice = detect_default({}, tools("claude", "codex"), signed_in)
    assert choice.spec == LMSpec(kind="claude")
    assert "/usr/bin/claude" in choice.reason


def test_codex_cli_when_no_claude() -> None:
    assert detect_default({}, tools("codex"), signed_in).spec.kind == "codex"


def test_a_signed_out_cli_is_passed_over_and_the_reason_says_why() -> None:
    """Installed but signed out, an agent could only reconnect until its
    idle timeout, every iteration: the offline proposer runs instead."""
    choice = detect_default({}, tools("claude", "codex"), signed_out)
    assert choice.spec.kind == "offline"
    assert "the codex CLI at /usr/bin/codex is not signed in" in choice.reason
    assert "run `claude login`" in choice.reason

    def only_codex(tool: str, path: str, env: Mapping[str, str]) -> str | None:
        return None if tool == "codex" else signed_out(tool, path, env)

    assert detect_default({}, tools("claude", "codex"), only_codex).spec.kind == "codex"


def test_offline_when_nothing_is_found() -> None:
    choice = detect_default({}, tools(), signed_out)
    assert choice.spec.kind == "offline"
    assert choice.reason == "no API key or signed-in agent CLI found: using the offline proposer"


def test_real_environment_and_path_via_monkeypatch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_default().spec.kind == "offline"
    codex = tmp_path / "codex"
    # Signed out: `codex login status` exits 1, as the real one does.
    codex.write_text('#!/bin/sh\n[ "$1 $2" = "login status" ] && { echo Not logged in; exit 1; }\n'
                     'exit 0\n')
    codex.chmod(0o755)
    choice = detect_default()
    assert choice.spec.kind == "offline" and "Not logged in" in choice.reason
    codex.write_text("#!/bin/sh\nexit 0\n")
    assert detect_default().spec.kind == "codex"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert detect_default().spec.kind == "openai"


@pytest.mark.parametrize(
    "value,expected",
    [
        ("openai-compatible:qwen2.5-coder:32b@http://127.0.0.1:11434/v1",
         LMSpec(kind="openai-compatible", model="qwen2.5-coder:32b",
                base_url="http://127.0.0.1:11434/v1")),
        ("openai-compatible:m@http://h:8000/v1/",
         LMSpec(kind="openai-compatible", model="m", base_url="http://h:8000/v1")),
        ("openai:gpt-5:high@https://gw.example/v1",
         LMSpec(kind="openai", model="gpt-5", effort="high", base_url="https://gw.example/v1")),
        ("codex@http://127.0.0.1:9/v1", LMSpec(kind="codex", base_url="http://127.0.0.1:9/v1")),
    ],
)
def test_base_urls_parse_and_print_back(value: str, expected: LMSpec) -> None:
    spec = parse_lm_spec(value)
    assert spec == expected
    assert parse_lm_spec(str(spec)) == spec


def test_a_key_in_the_given_environment_stands_in_for_a_login(tmp_path: Path) -> None:
    """Detection checks the sign-in with the environment it was given."""
    codex = tmp_path / "codex"
    codex.write_text("#!/bin/sh\necho Not logged in; exit 1\n")
    codex.chmod(0o755)
    def which(name: str) -> str | None:
        return str(codex) if name == "codex" else None

    assert detect_default({}, which).spec.kind == "offline"
    assert detect_default({"CODEX_API_KEY": "k"}, which).spec.kind == "codex"
