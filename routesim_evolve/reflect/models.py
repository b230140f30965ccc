"""What each provider's models accept: how many output tokens, and whether
they take an effort level or a thinking budget.

A request the model cannot take fails every iteration the same way, so
these rules decide up front what to send. Model ids are matched by pattern,
so dated snapshots (`claude-sonnet-4-5-20250929`) and fine-tunes
(`ft:gpt-4o:org:id`) follow their base model.
"""

from __future__ import annotations

import re
from typing import Literal

Thinking = Literal["adaptive", "budget", "none"]

# (pattern, max output tokens, how it thinks), first match wins. From the
# providers' model pages; an unknown model gets the cautious last row.
_ANTHROPIC: tuple[tuple[re.Pattern[str], int, Thinking], ...] = tuple(
    (re.compile(p), tokens, thinking)
    for p, tokens, thinking in (
        (r"claude-3-5-haiku|claude-3-5-sonnet", 8_192, "none"),
        (r"claude-3-(opus|sonnet|haiku)", 4_096, "none"),
        (r"claude-3-7-sonnet", 64_000, "budget"),
        (r"claude-(opus|sonnet)-4-20\d{6}|claude-(opus|sonnet)-4-0\b", 32_000, "budget"),
        (r"claude-opus-4-1", 32_000, "budget"),
        (r"claude-(opus|sonnet|haiku)-4-5", 64_000, "budget"),
        (r"claude-sonnet-4\b", 64_000, "budget"),
        (r"claude-(opus|sonnet)-4-[6-9]", 128_000, "adaptive"),
        (r"claude-(opus|sonnet|haiku|fable)-[5-9]", 128_000, "adaptive"),
        (r"", 32_000, "adaptive"),
    )
)

# (pattern, max output tokens) of OpenAI's models, first match wins; from
# the provider's model pages. An unknown model gets a cautious ceiling:
# OpenAI's own the largest of its older chat models, a compatible server's
# (a local model, a gateway) what most local models can write.
_OPENAI: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(p), tokens)
    for p, tokens in (
        (r"(^|[:/])gpt-(5|[6-9])", 128_000),
        (r"(^|[:/])o1-mini", 65_536),
        (r"(^|[:/])(o\d|codex)", 100_000),
        (r"(^|[:/])gpt-4\.1", 32_768),
        (r"(^|[:/])gpt-4o", 16_384),
        (r"(^|[:/])gpt-4-turbo|(^|[:/])gpt-3\.5", 4_096),
        (r"(^|[:/])gpt-4\b", 8_192),
    )
)
OPENAI_UNKNOWN_MAX_TOKENS = 16_384
COMPATIBLE_UNKNOWN_MAX_TOKENS = 8_192

# OpenAI models that reason (and so take reasoning.effort).
_OPENAI_REASONING = re.compile(r"(^|[:/])(o\d|gpt-5|gpt-[6-9]|codex)")


def anthropic_limits(model: str) -> tuple[int, Thinking]:
    """The model's output-token ceiling and how it takes effort."""
    for pattern, tokens, thinking in _ANTHROPIC:
        if pattern.search(model):
            return tokens, thinking
    raise AssertionError("the last row matches every model")


def anthropic_max_tokens(model: str, wanted: int) -> int:
    """`wanted`, capped at what the model can write."""
    return min(wanted, anthropic_limits(model)[0])


def openai_max_tokens(model: str, wanted: int, *, compatible: bool = False) -> int:
    """`wanted`, capped at what the model can write: an OpenAI model's
    ceiling from the table; an unknown model's the cautious default of the
    OpenAI API or, on a compatible server, of local models."""
    for pattern, tokens in _OPENAI:
        if pattern.search(model):
            return min(wanted, tokens)
    return min(wanted, COMPATIBLE_UNKNOWN_MAX_TOKENS if compatible
               else OPENAI_UNKNOWN_MAX_TOKENS)


def openai_reasons(model: str) -> bool:
    """Whether an OpenAI model takes `reasoning.effort` (o-series, GPT-5 on)."""
    return bool(_OPENAI_REASONING.search(model))
