"""A local fake LLM server (127.0.0.1 only) speaking the providers' real
API shapes: Anthropic Messages, OpenAI Responses and Chat Completions, all
streamed, and their `models` endpoints. The real SDK clients (and the real
codex CLI) talk to it over HTTP. `reply` decides each answer from the
request; every request is recorded."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import llm_shapes

from routesim_evolve.reflect.usage import Usage


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Answer:
    """What to send: a reply text (shaped per API), or an error status with
    its body, optionally after a stall."""

    text: str = ""
    status: int = 200
    error: dict[str, Any] | None = None
    stall_s: float = 0.0
    usage: Usage | None = None  # None: the API shape's default


Reply = Callable[[Request], Answer]


class FakeLLMServer:
    """Serves until `close()`; `url` is its base, e.g. http://127.0.0.1:PORT."""

    def __init__(self, reply: Reply, *, models: tuple[str, ...] = (),
                 model_list: bool = True) -> None:
        self.reply = reply
        self.models = models
        self.model_list = model_list  # False: GET /models answers 404, as some gateways do
        self.requests: list[Request] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def posts(self, path_suffix: str) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.path.endswith(path_suffix)]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append(Request("GET", self.path, dict(self.headers), {}))
                path = self.path.split("?")[0].rstrip("/")
                anthropic = "anthropic-version" in {k.lower() for k in self.headers}
                if path.endswith("/models") and not server.model_list:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if path.endswith("/models"):
                    data = [llm_shapes.openai_model(m) for m in server.models]
                    self._json(200, {"object": "list", "data": data})
                    return
                model = path.rsplit("/", 1)[-1]
                if server.models and model not in server.models:
                    body = (llm_shapes.anthropic_error("not_found_error") if anthropic
                            else llm_shapes.openai_error("no such model", "invalid_request_error",
                                                         "model_not_found"))
                    self._json(404, body)
                    return
                self._json(200, llm_shapes.anthropic_model(model) if anthropic
                           else llm_shapes.openai_model(model))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                request = Request("POST", self.path, dict(self.headers), body)
                server.requests.append(request)
                answer = server.reply(request)
                if answer.stall_s:
                    time.sleep(answer.stall_s)
                if answer.status != 200:
                    self._json(answer.status, answer.error or {})
                    return
                model = str(body.get("model", ""))
                # Claude Code asks for /v1/messages?beta=true.
                path = self.path.split("?")[0]
                if path.endswith("/messages"):
                    payload = llm_shapes.anthropic_stream(answer.text, model=model,
                                                          usage=answer.usage)
                elif path.endswith("/responses"):
                    payload = llm_shapes.responses_stream(answer.text, model=model,
                                                          usage=answer.usage)
                elif path.endswith("/chat/completions"):
                    payload = llm_shapes.chat_stream(answer.text, model=model, usage=answer.usage)
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
