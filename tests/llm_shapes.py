"""The providers' wire shapes, as recorded from their APIs: streamed
(server-sent events) replies of the Anthropic Messages API, the OpenAI
Responses API and Chat Completions, with their usage blocks, and the model
metadata their `models` endpoints return. Tests serve these through the
real SDK clients (an HTTP transport or a local server), never mocks of our
own functions."""

from __future__ import annotations

import json
from typing import Any

from routesim_evolve.reflect.usage import Usage

MODEL_CREATED = "2026-07-24T00:00:00Z"
# What a reply reports when a test does not say (`usage=None`).
ANTHROPIC_USAGE = Usage(input_tokens=12, output_tokens=340)
RESPONSES_USAGE = Usage(input_tokens=176, cache_read_tokens=1024, output_tokens=400)
CHAT_USAGE = Usage(input_tokens=900, output_tokens=300)


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: `event:` (when named) and one `data:` line each."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def anthropic_stream(text: str, *, model: str = "claude-opus-4-7", stop_reason: str = "end_turn",
                     usage: Usage | None = None) -> bytes:
    """A streamed Messages reply: a thinking block, then the text in two
    deltas. Its usage is spelt as the API does: input apart from cache
    reads and writes, writes split by TTL."""
    tokens = usage or ANTHROPIC_USAGE
    half = len(text) // 2
    usage_start = {
        "input_tokens": tokens.input_tokens,
        "cache_creation_input_tokens": tokens.cache_write_tokens + tokens.cache_write_1h_tokens,
        "cache_read_input_tokens": tokens.cache_read_tokens,
        "cache_creation": {"ephemeral_5m_input_tokens": tokens.cache_write_tokens,
                           "ephemeral_1h_input_tokens": tokens.cache_write_1h_tokens},
        "output_tokens": 1,
        "service_tier": "standard",
    }
    message = {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
               "content": [], "model": model, "stop_reason": None, "stop_sequence": None,
               "usage": usage_start}
    return sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "thinking", "thinking": "",
                                                   "signature": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "thinking_delta", "thinking": "Let me see."}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "signature_delta", "signature": "EqQBCg=="}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": text[:half]}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": text[half:]}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                           "usage": {"output_tokens": tokens.output_tokens}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def anthropic_stream_error(kind: str, *, model: str = "claude-opus-4-7") -> bytes:
    """A Messages stream that answered HTTP 200, started, then sent an
    `event: error` (as the API does when it is overloaded mid-reply)."""
    message = {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
               "content": [], "model": model, "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    return sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
        ("error", anthropic_error(kind)),
    ])


def anthropic_error(kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": f"{kind} happened"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}


def anthropic_model(model: str) -> dict[str, Any]:
    return {"type": "model", "id": model, "display_name": model, "created_at": MODEL_CREATED}


def responses_stream(text: str, *, model: str = "gpt-5.5", status: str = "completed",
                     usage: Usage | None = None, error_code: str = "server_error") -> bytes:
    """A streamed Responses reply: created, a reasoning item, the message
    item with its text in two deltas, completed with usage, whose input
    count includes the cached tokens."""
    tokens = usage or RESPONSES_USAGE
    input_tokens = tokens.input_tokens + tokens.cache_read_tokens
    output_tokens = tokens.output_tokens
    half = len(text) // 2
    msg_id, rs_id = "msg_68af4030592c81938ec0a5fbab4a3e9f", "rs_68af4030baa48193b0b43b4c2a176a1a"
    base = {"id": "resp_68af4030592c81938ec0a5fbab4a3e9f", "object": "response",
            "created_at": 1756315696, "model": model, "output": [],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "store": False,
            "text": {"format": {"type": "text"}},
            "error": None, "incomplete_details": None, "usage": None}
    message = {"id": msg_id, "type": "message", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": text, "annotations": [],
                            "logprobs": []}]}
    reasoning = {"id": rs_id, "type": "reasoning", "summary": []}
    usage_block = {"input_tokens": input_tokens,
                   "input_tokens_details": {"cached_tokens": tokens.cache_read_tokens},
                   "output_tokens": output_tokens,
                   "output_tokens_details": {"reasoning_tokens": output_tokens // 2},
                   "total_tokens": input_tokens + output_tokens}
    done = {**base, "status": status, "output": [reasoning, message], "usage": usage_block,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete"
            else None,
            "error": {"code": error_code, "message": f"{error_code} happened"}
            if status == "failed" else None}
    seq = iter(range(100))

    def ev(kind: str, **fields: Any) -> tuple[str, Any]:
        return kind, {"type": kind, "sequence_number": next(seq), **fields}

    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    return sse([
        ev("response.created", response={**base, "status": "in_progress"}),
        ev("response.in_progress", response={**base, "status": "in_progress"}),
        ev("response.output_item.added", output_index=0, item=reasoning),
        ev("response.output_item.done", output_index=0, item=reasoning),
        ev("response.output_item.added", output_index=1,
           item={**message, "status": "in_progress", "content": []}),
        ev("response.content_part.added", item_id=msg_id, output_index=1, content_index=0,
           part=part),
        ev("response.output_text.delta", item_id=msg_id, output_index=1, content_index=0,
           delta=text[:half], logprobs=[]),
        ev("response.output_text.delta", item_id=msg_id, output_index=1, content_index=0,
           delta=text[half:], logprobs=[]),
        ev("response.output_text.done", item_id=msg_id, output_index=1, content_index=0,
           text=text, logprobs=[]),
        ev("response.content_part.done", item_id=msg_id, output_index=1, content_index=0,
           part={**part, "text": text}),
        ev("response.output_item.done", output_index=1, item=message),
        ev(f"response.{status}", response=done),
    ])


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def openai_model(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 1756315696, "owned_by": "system"}


def chat_stream(text: str, *, model: str = "qwen2.5-coder:32b", finish_reason: str = "stop",
                usage: Usage | None = None) -> bytes:
    """A streamed Chat Completions reply (vLLM / llama.cpp / Ollama shape):
    a role chunk, content chunks, the finish chunk, the usage chunk, [DONE].
    The prompt count includes cached tokens, itemised only when there are
    some."""
    tokens = usage or CHAT_USAGE
    prompt_tokens = tokens.input_tokens + tokens.cache_read_tokens
    completion_tokens = tokens.output_tokens
    base = {"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion.chunk",
            "created": 1756315696, "model": model, "system_fingerprint": "fp_local"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                     "finish_reason": finish}]}

    usage_chunk: dict[str, Any] = {"prompt_tokens": prompt_tokens,
                                   "completion_tokens": completion_tokens,
                                   "total_tokens": prompt_tokens + completion_tokens}
    if tokens.cache_read_tokens:
        usage_chunk["prompt_tokens_details"] = {"cached_tokens": tokens.cache_read_tokens}
    pieces = [text[i:i + 40] for i in range(0, len(text), 40)] or [""]
    return sse([
        (None, chunk({"role": "assistant", "content": ""})),
        *[(None, chunk({"content": p})) for p in pieces],
        (None, chunk({}, finish_reason)),
        (None, {**base, "choices": [], "usage": usage_chunk}),
        (None, "[DONE]"),
    ])
