"""Bounds on text that a candidate controls before it reaches a prompt.

A candidate's source lines, panic messages and printed output all flow into
the feedback a reflection model reads. Any of them can be huge (a 400 KB
source line) or forged (a fake `panic:` printed before a real crash), so
every quote is clipped here, and the whole feedback of one evaluation is
capped.
"""

from __future__ import annotations

#: Longest quoted line (a source line, a message line).
MAX_LINE_CHARS = 240
#: Longest feedback of one evaluation.
MAX_FEEDBACK_CHARS = 6000


def clip_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """One line, cut to `limit` characters with a note of how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def clip_block(text: str, limit: int = MAX_FEEDBACK_CHARS) -> str:
    """Every line clipped, then the whole cut to `limit` characters, keeping
    its head and its tail (a crash's cause is often at the end)."""
    text = "\n".join(clip_line(line) for line in text.splitlines())
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters cut …]\n{text[-half:]}"


def quoted_output(text: str, lines: int = 20) -> str:
    """The tail of a process's output, labelled as what it is: the
    candidate's own printing may be mixed in, and none of it is the
    harness's word."""
    tail = "\n".join(text.strip().splitlines()[-lines:])
    if not tail:
        return "(it printed nothing)"
    body = "\n".join("  | " + clip_line(line) for line in tail.splitlines())
    return f"Its last output (untrusted: the router's own printing may be mixed in):\n{body}"
