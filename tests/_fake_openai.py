"""A small fake OpenAI-compatible server on 127.0.0.1 for tests (bounded, no network).

``FakeOpenAI(behave)`` answers ``POST /v1/chat/completions`` with ``behave(body, n) ->
(status, body bytes, delay_s)`` (status -1: write raw bytes, not even HTTP). Without
``behave`` it plays ``self.script``: entries ``(status, payload, delay_s)``, the last one
repeating; a payload ``{"reply": text}`` becomes a chat completion with that content. Every
request is recorded (``requests``: bodies, ``headers``, ``paths``) and at most
``max_requests`` are answered (then 503), so a looping client cannot run away.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Behaviour = Callable[[dict[str, Any], int], tuple[int, bytes, float]]


def completion(content: str) -> dict[str, Any]:
    return {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ]
    }


class FakeOpenAI:
    def __init__(self, behave: Behaviour | None = None, max_requests: int = 400):
        self.behave = behave or self._scripted
        self.script: list[tuple[int, Any, float]] = [(200, {"reply": "ok"}, 0.0)]
        self.max_requests = max_requests
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    n = len(outer.requests)
                    if n >= outer.max_requests:
                        self.send_error(503, "fake server: request budget used up")
                        return
                    body = json.loads(raw or b"{}")
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                    outer.paths.append(self.path)
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    if self.path != "/v1/chat/completions":
                        status, data, delay = 404, b'{"error": {"message": "no such route"}}', 0.0
                    else:
                        status, data, delay = outer.behave(body, n)
                    time.sleep(delay)
                    if status == -1:
                        self.wfile.write(data)
                        return
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with outer.lock:
                        outer.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def _scripted(self, body: dict[str, Any], n: int) -> tuple[int, bytes, float]:
        status, payload, delay = self.script[min(n, len(self.script) - 1)]
        if isinstance(payload, dict) and "reply" in payload:
            payload = completion(payload["reply"])
        return (
            status,
            payload if isinstance(payload, bytes) else json.dumps(payload).encode(),
            delay,
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
