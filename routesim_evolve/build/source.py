"""A candidate's source as text: UTF-8 Go, or refused with the reason.

Every candidate an LM replies with, an agent leaves or a user names arrives
as bytes. A file that is not UTF-8 text (or holds a NUL byte, as binaries
do) is refused here, like a file that does not compile, with the offset of
the first bad byte; it never reaches the compiler, and it never crashes the
run that read it.
"""

from __future__ import annotations

from pathlib import Path

from routesim_evolve.fsutil import MIB

#: The largest candidate file taken from an untrusted hand (an agent's work
#: dir, the evaluation spool): the allow-list refuses far smaller files;
#: this only stops a flood before it is held.
MAX_SOURCE_BYTES = 4 * MIB


class NotSourceText(ValueError):
    """The bytes are not a Go source file's text; the message says where."""


def source_text(raw: bytes, name: str) -> str:
    """The text of a candidate's bytes; raises NotSourceText naming `name`
    and the first byte that is not UTF-8 text."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotSourceText(
            f"{name} is not UTF-8 text: byte 0x{raw[exc.start]:02X} at offset {exc.start} "
            "(Go source is UTF-8)") from None
    if "\0" in text:
        raise NotSourceText(f"{name} holds a NUL byte at offset {text.index(chr(0))}: "
                            "it is not Go source text")
    return text


def read_source(path: Path) -> str:
    """The text of a candidate file (source_text); OSError as reading raises."""
    return source_text(path.read_bytes(), str(path))
