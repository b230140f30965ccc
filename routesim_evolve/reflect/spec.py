"""`--reflection-lm` values: which LM or agent CLI proposes candidates.

Grammar: `offline`, or `KIND[:MODEL[:EFFORT]][@URL]` with KIND one of
anthropic, openai, openai-compatible, claude, codex. The effort is the last
`:`-field when it names an effort level, so OpenAI fine-tune ids
(`ft:gpt-4o:org:id`) and Ollama tags (`qwen2.5-coder:32b`) stay whole.
`@URL` (http or https) points the back-end at another server: required for
openai-compatible (`openai-compatible:MODEL@http://127.0.0.1:8000/v1`),
optional for the others (a gateway or proxy).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from routesim_evolve.reflect.cli_backend import cli_missing_login

Kind = Literal["anthropic", "openai", "openai-compatible", "claude", "codex", "offline"]
KINDS: tuple[Kind, ...] = ("anthropic", "openai", "openai-compatible", "claude", "codex", "offline")

# Effort levels each target accepts (Anthropic output_config.effort and the
# claude CLI's --effort; OpenAI reasoning.effort; codex model_reasoning_effort).
EFFORTS: dict[Kind, tuple[str, ...]] = {
    "anthropic": ("low", "medium", "high", "xhigh", "max"),
    "claude": ("low", "medium", "high", "xhigh", "max"),
    "openai": ("none", "minimal", "low", "medium", "high", "xhigh", "max"),
    # Compatible servers differ in what they accept: nothing is sent.
    "openai-compatible": (),
    "codex": ("minimal", "low", "medium", "high", "xhigh", "max"),
    "offline": (),
}
_ALL_EFFORTS = frozenset(e for levels in EFFORTS.values() for e in levels)

# Models used when the value names only the kind. The CLIs fall back to the
# model configured in the tool itself, so they need none.
DEFAULT_MODELS: dict[Kind, str | None] = {
    "anthropic": "claude-opus-4-7",
    "openai": "gpt-5.5",
    "openai-compatible": None,
    "claude": None,
    "codex": None,
    "offline": None,
}

# Anthropic model ids never contain ':', so a third field there must be an
# effort; OpenAI ids may (fine-tunes), so there an unknown one is model.
_COLON_FREE_MODELS: frozenset[Kind] = frozenset({"anthropic", "claude"})


class LMSpecError(ValueError):
    """A malformed `--reflection-lm` value; the message says how to fix it."""


class LMSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Kind
    model: str | None = None
    effort: str | None = None
    base_url: str | None = None

    def __str__(self) -> str:
        """The value that parses back to this spec (`claude::max` keeps its
        empty model field, else `max` would read as a model)."""
        if self.effort:
            text = f"{self.kind}:{self.model or ''}:{self.effort}"
        else:
            text = f"{self.kind}:{self.model}" if self.model else self.kind
        return f"{text}@{self.base_url}" if self.base_url else text


def parse_lm_spec(value: str) -> LMSpec:
    """Parse a `--reflection-lm` value, raising `LMSpecError` with a hint."""
    text, base_url = _split_url(value.strip(), value)
    kind_text, sep, rest = text.partition(":")
    kind = _parse_kind(kind_text, value)
    if kind == "offline":
        if sep or base_url:
            raise LMSpecError(f"{value!r}: 'offline' takes no model, effort or URL")
        return LMSpec(kind="offline")
    if kind == "openai-compatible":
        return _compatible(rest, base_url, value)
    if not sep:
        return LMSpec(kind=kind, model=DEFAULT_MODELS[kind], base_url=base_url)
    model, effort = _split_effort(kind, rest, value)
    return LMSpec(kind=kind, model=model or DEFAULT_MODELS[kind], effort=effort,
                  base_url=base_url)


def _split_url(text: str, value: str) -> tuple[str, str | None]:
    """`SPEC@URL` into SPEC and URL; the URL starts at the last `@http`."""
    at = text.rfind("@http")
    if at < 0:
        if "@" in text:
            raise LMSpecError(
                f"{value!r}: the part after '@' must be an http:// or https:// URL, "
                "e.g. openai-compatible:MODEL@http://127.0.0.1:8000/v1"
            )
        return text, None
    url = text[at + 1:]
    if not url.startswith(("http://", "https://")) or len(url.split("//", 1)[1]) == 0:
        raise LMSpecError(f"{value!r}: {url!r} is not an http:// or https:// URL")
    return text[:at], url.rstrip("/")


def _compatible(model: str, base_url: str | None, value: str) -> LMSpec:
    """`openai-compatible:MODEL@URL`: both parts required, the model whole."""
    if not model or base_url is None:
        raise LMSpecError(
            f"{value!r}: write openai-compatible:MODEL@URL, e.g. "
            "openai-compatible:qwen2.5-coder:32b@http://127.0.0.1:11434/v1"
        )
    return LMSpec(kind="openai-compatible", model=model, base_url=base_url)


def _parse_kind(text: str, value: str) -> Kind:
    for kind in KINDS:
        if text == kind:
            return kind
    raise LMSpecError(
        f"{value!r}: unknown reflection LM kind {text!r}; expected one of "
        f"{', '.join(KINDS)} (e.g. anthropic:claude-opus-4-7:high, codex:gpt-5.5, "
        "openai-compatible:MODEL@http://127.0.0.1:8000/v1, offline)"
    )


def _split_effort(kind: Kind, rest: str, value: str) -> tuple[str, str | None]:
    """Split `MODEL[:EFFORT]`; an empty model (`KIND::EFFORT`) means the
    kind's default model."""
    model, sep, last = rest.rpartition(":")
    levels = EFFORTS[kind]
    if not sep:
        if rest in _ALL_EFFORTS:
            raise LMSpecError(
                f"{value!r}: {rest!r} is an effort level, not a model; write "
                f"{kind}:MODEL:{rest}, or {kind}::{rest} for the default model"
            )
        model, last = rest, ""
    elif last in levels:
        pass
    elif last in _ALL_EFFORTS or kind in _COLON_FREE_MODELS:
        raise LMSpecError(
            f"{value!r}: effort {last!r} is not accepted by {kind}; use one of {', '.join(levels)}"
        )
    else:
        model, last = rest, ""
    if not model and not last:
        raise LMSpecError(f"{value!r}: empty model name; write {kind}:MODEL[:EFFORT]")
    return model, last or None


class DefaultChoice(BaseModel):
    """The auto-detected back-end and a sentence the CLI prints about why."""

    model_config = ConfigDict(frozen=True)

    spec: LMSpec
    reason: str


def detect_default(
    env: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    missing_login: Callable[[str, str, Mapping[str, str]], str | None] = cli_missing_login,
) -> DefaultChoice:
    """Pick a back-end from what this machine has: an API key first (cheapest
    to drive, prompt caching), then a signed-in agent CLI, else the offline
    proposer. An agent CLI that is installed but signed out is passed over
    (and the reason says so): it could only reconnect until it timed out."""
    env = os.environ if env is None else env
    if env.get("ANTHROPIC_API_KEY"):
        spec = LMSpec(kind="anthropic", model=DEFAULT_MODELS["anthropic"])
        return DefaultChoice(spec=spec, reason=f"ANTHROPIC_API_KEY is set: using {spec}")
    if env.get("OPENAI_API_KEY"):
        spec = LMSpec(kind="openai", model=DEFAULT_MODELS["openai"])
        return DefaultChoice(spec=spec, reason=f"OPENAI_API_KEY is set: using {spec}")
    passed_over: list[str] = []
    for tool in ("claude", "codex"):
        path = which(tool)
        if not path:
            continue
        missing = missing_login(tool, path, env)
        if missing is None:
            return DefaultChoice(
                spec=LMSpec(kind=tool),
                reason=f"no API key set, but the {tool} CLI is on PATH ({path}): using it",
            )
        passed_over.append(f"the {tool} CLI at {path} is {missing}")
    reason = "no API key or signed-in agent CLI found: using the offline proposer"
    if passed_over:
        reason += " (" + "; ".join(passed_over) + ")"
    return DefaultChoice(spec=LMSpec(kind="offline"), reason=reason)
