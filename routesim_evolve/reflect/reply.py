"""Turn a reflection prompt into a checked Go candidate with any back-end.

The back-end's `complete` already rides out transient failures; this adds
the one content retry: a reply with no usable Go file gets a single
follow-up asking for the whole file in one ```go block.
"""

from __future__ import annotations

from collections.abc import Callable

from routesim_evolve.reflect.base import PromptParts, ReflectionBackend
from routesim_evolve.reflect.errors import ProposalFailed
from routesim_evolve.reflect.extract import Extraction, extract_go
from routesim_evolve.textclip import clip_line


def follow_up_request(reason: str) -> str:
    return (
        f"Your reply could not be used: {reason}\n\n"
        "Reply again with the complete file candidate_impl.go (`package main`, every "
        "import and function, nothing left out or elided) in a single ```go fenced "
        "block, closed with ```. Put no other code block in the reply."
    )


def propose(backend: ReflectionBackend, prompt: PromptParts, *, check_syntax: bool = True,
            on_reply: Callable[[str], None] | None = None) -> str:
    """The proposed Go file. Raises `ProposalFailed` (skip the iteration)
    when the back-end gives up or two replies in a row hold no usable file.
    `on_reply` is handed the first reply's text (its summary line)."""
    reply = backend.complete(prompt).text
    if on_reply is not None:
        on_reply(reply)
    first = extract_go(reply, check_syntax=check_syntax)
    if first.ok:
        return _code(first)
    retry = prompt.with_follow_up(reply, follow_up_request(_reason(first)))
    second = extract_go(backend.complete(retry).text, check_syntax=check_syntax)
    if second.ok:
        return _code(second)
    raise ProposalFailed(f"{backend.name}: no usable Go file after a follow-up: {_reason(second)}")


def reply_summary(reply: str) -> str:
    """What a reply says before its code: the model's own line on what it
    changed and why (empty when it says nothing)."""
    if "```" not in reply:
        return ""
    return clip_line(" ".join(reply.split("```", 1)[0].split()), SUMMARY_CHARS)


#: How much of a reply's summary the memory keeps.
SUMMARY_CHARS = 240


def _code(result: Extraction) -> str:
    assert result.code is not None
    return result.code


def _reason(result: Extraction) -> str:
    return result.reason or "no usable Go file"
