"""Bounds on text that a candidate controls before it reaches a prompt.

A candidate's source lines, panic messages and printed output all flow into
the feedback a reflection model reads. Any of them can be huge (a 400 KB
source line) or forged (a fake `panic:` printed before a real crash), so
every quote is clipped here, and the whole feedback of one evaluation is
capped. Every quoted line is also made printable: control characters (a
terminal's escape sequences among them) and Unicode's bidirectional
overrides are shown as escapes, so a quote can neither drive the terminal
or log viewer that shows it nor reorder what its reader sees.
"""

from __future__ import annotations

#: Longest quoted line (a source line, a message line).
MAX_LINE_CHARS = 240
#: Longest feedback of one evaluation.
MAX_FEEDBACK_CHARS = 6000

# C0 and C1 controls but the tab, DEL, and the bidirectional embeddings,
# overrides and isolates, each shown as its escape.
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))
                if c != 0x09}
_UNPRINTABLE |= {c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def printable(text: str) -> str:
    """`text` with every control character and bidirectional override
    shown as an escape (a newline too: a quote stays on its line)."""
    return text.translate(_UNPRINTABLE)


def clip_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """One line, made printable, cut to `limit` characters with a note of
    how much was cut."""
    text = printable(text)
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
