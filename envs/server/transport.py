"""The bounded transport: body caps before parsing, slow-client deadlines, a sized JSON codec.

Contract
- :class:`BodyLimit` (ASGI middleware) reads an HTTP request's body before the application sees
  it: a ``Content-Length`` or a body past ``max_bytes`` is a ``413``, a body not received within
  ``timeout_s`` a ``408``, a body with more than ``MAX_ITEMS`` JSON values a ``422`` (one-line
  JSON ``error``); nothing past the cap is buffered. Every route is behind it.
- :func:`deadline_protocol` is uvicorn's HTTP protocol with a deadline on the request head:
  a connection that has not sent a whole request head ``timeout_s`` after it opened (or after
  its last response) is closed (slow-loris clients hold no connection for ever).
- :func:`decode` / :func:`encode` parse and serialise on the event loop only what is small
  (``inline_bytes``); larger messages go to a worker thread, so no message holds the loop up.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from clarisql.envs.server.options import MAX_ITEMS, parse_message, too_many_values

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def decode(text: str | bytes, inline_bytes: int) -> dict[str, Any] | str:
    """:func:`~clarisql.envs.server.options.parse_message`, on a thread when large."""
    if len(text) <= inline_bytes:
        return parse_message(text)
    return await asyncio.to_thread(parse_message, text)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


async def encode(obj: Any, inline_bytes: int, size_hint: int) -> str:
    """``obj`` as compact JSON, on a thread when ``size_hint`` (a guess of its size) is large."""
    if size_hint <= inline_bytes:
        return _dumps(obj)
    return await asyncio.to_thread(_dumps, obj)


def _json_error(status: int, message: str) -> tuple[Message, Message]:
    body = json.dumps({"error": message}).encode()
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ],
    }
    return start, {"type": "http.response.body", "body": body}


class BodyLimit:
    """ASGI middleware: request bodies capped and read within a deadline (see module doc)."""

    def __init__(self, app: Any, max_bytes: int, timeout_s: float):
        self.app, self.max_bytes, self.timeout_s = app, int(max_bytes), float(timeout_s)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    return await self._refuse(send, 400, "malformed Content-Length")
                if declared > self.max_bytes:
                    return await self._refuse(send, 413, self._too_large(declared))
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_bytes:
                        return await self._refuse(send, 413, self._too_large(size, more=True))
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return await self._refuse(
                send, 408, f"the request body did not arrive within {self.timeout_s:g} s"
            )
        body = b"".join(chunks)
        chunks.clear()
        # values counted before any route's json.loads (which holds the GIL for its whole run)
        crowded = (
            too_many_values(body)
            if len(body) <= 65536
            else await asyncio.to_thread(too_many_values, body)
        )
        if crowded:
            return await self._refuse(
                send,
                422,
                f"a request body may hold at most {MAX_ITEMS} values (list items and fields)",
            )
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self, size: int, more: bool = False) -> str:
        what = f"more than {self.max_bytes}" if more else str(size)
        return f"request body of {what} bytes refused: at most {self.max_bytes} bytes"

    @staticmethod
    async def _refuse(send: Send, status: int, message: str) -> None:
        start, body = _json_error(status, message)
        await send(start)
        await send(body)


def deadline_protocol(timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class with a request-head deadline (see the module docstring)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    base: Any = AutoHTTPProtocol

    class DeadlineHTTPProtocol(base):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None
        _armed_cycle: Any = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._armed_cycle = self.cycle
            self._head_timer = self.loop.call_later(timeout_s, self._head_expired)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_expired(self) -> None:
            self._head_timer = None
            started = self.cycle is not self._armed_cycle
            upgraded = self.transport.get_protocol() is not self
            if not started and not upgraded and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not self._armed_cycle or self.transport.get_protocol() is not self:
                self._disarm()  # a request began (or the connection became a WebSocket)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request's head, too, has to come in time

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return DeadlineHTTPProtocol
