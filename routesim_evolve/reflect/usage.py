"""What one reply cost: tokens as the provider counted them.

Every back-end fills a `Usage` from its own usage data (Anthropic's
`usage`, OpenAI's `usage` with cached tokens, the Chat Completions
`usage` chunk, the claude CLI's result event, codex's `turn.completed`);
`pricing.py` turns it into dollars.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Usage(BaseModel):
    """Tokens of one or more replies. `input_tokens` counts only uncached
    input; cache writes and reads are separate because they are priced
    differently. `reported_cost_usd` is the tool's own figure where it gives
    one (the claude CLI does), preferred over our price table."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    # Writes kept for an hour (Anthropic's ttl "1h") cost more than 5-minute ones.
    cache_write_1h_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    reported_cost_usd: float | None = Field(default=None, ge=0)

    @classmethod
    def with_cached_input(
        cls, input_tokens: int | None, cached: int | None, output_tokens: int | None
    ) -> Usage:
        """From OpenAI's convention (Responses, Chat Completions, codex), where
        the input count includes the cached tokens."""
        cached = int(cached or 0)
        return cls(input_tokens=max(0, int(input_tokens or 0) - cached),
                   output_tokens=int(output_tokens or 0), cache_read_tokens=cached)

    def __add__(self, other: Usage) -> Usage:
        reported = (
            None
            if self.reported_cost_usd is None and other.reported_cost_usd is None
            else (self.reported_cost_usd or 0.0) + (other.reported_cost_usd or 0.0)
        )
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            reported_cost_usd=reported,
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens + self.output_tokens + self.cache_write_tokens
            + self.cache_write_1h_tokens + self.cache_read_tokens
        )


class Completion(BaseModel):
    """A back-end's reply: the text and what it cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Usage()
    #: What an agent said when it was done, beside the file it left (the
    #: text): its summary of the change, which its next prompts recall.
    said: str = ""
