"""The ``/ws`` endpoint: OpenEnv's WebSocket protocol, with no message able to end a session.

Contract (the messages are OpenEnv's: ``reset``/``step``/``state``/``close``, answered by
``observation``/``state``/``error``)
- Every frame gets exactly one reply. A binary frame, a message past ``max_message_bytes``
  (refused before it is parsed, never echoed), malformed JSON, a top level that is not an
  object, nesting past 16 levels, an unknown type, bad reset options or a malformed action get
  an ``error`` reply with a ``code`` and one-line ``message``, and the session lives on.
- A session takes its slot before its environment is built (``CAPACITY_REACHED`` and a close
  otherwise) and gives it back after the environment is closed, however the connection ends.
- A session with no message for ``idle_timeout_s`` is ended with an ``error`` of code
  ``SESSION_EXPIRED`` carrying the episode's public record (never an observation with
  ``done``), then closed (code 1001); its record stays in the server's expired records.
- Large messages are parsed and validated, and large replies serialised, on a thread; their
  steps never run on the event loop (see :mod:`clarisql.envs.server.transport`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from clarisql.envs.server.config import ServeConfig
from clarisql.envs.server.environment import SessionFactory
from clarisql.envs.server.models import ClarisqlAction
from clarisql.envs.server.options import BadRequest, reset_options
from clarisql.envs.server.sessions import AtCapacity, ExpiredRecords, public_record
from clarisql.envs.server.transport import decode, encode

_log = logging.getLogger("clarisql.serve")


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"code": code, "message": message, **extra}}


def _validate_action(data: Any) -> ClarisqlAction | str:
    if not isinstance(data, dict):
        return 'a step\'s "data" must be an action object ({"type": ...} or {"text": ...})'
    try:
        return ClarisqlAction.model_validate(data)
    except ValidationError as e:
        errs = e.errors(include_url=False, include_input=False, include_context=False)
        brief = "; ".join(f"{'.'.join(map(str, x['loc']))[:60]}: {x['msg'][:80]}" for x in errs[:3])
        return f"malformed action ({len(errs)} error(s)): {brief}"


class WebSocketSessions:
    """Serves ``/ws`` sessions made by ``factory`` under ``config``'s limits."""

    def __init__(self, factory: SessionFactory, config: ServeConfig, expired: ExpiredRecords):
        self.factory, self.config, self.expired = factory, config, expired

    async def serve(self, ws: WebSocket) -> None:
        await ws.accept()
        try:
            env = await asyncio.to_thread(self.factory)
        except AtCapacity as e:
            await self._send(ws, _error("CAPACITY_REACHED", str(e)))
            await self._close(ws, 1013)
            return
        except Exception as e:  # the factory failed: said, and no slot held
            await self._send(ws, _error("FACTORY_ERROR", f"{type(e).__name__}: {str(e)[:200]}"))
            await self._close(ws, 1011)
            return
        sid = uuid.uuid4().hex
        try:
            await self._loop(ws, env, sid)
        except WebSocketDisconnect:
            pass
        finally:
            await asyncio.to_thread(env.close)  # the slot is given back once closed
            await self._close(ws, 1000)

    async def _loop(self, ws: WebSocket, env: Any, sid: str) -> None:
        cfg = self.config
        while True:
            try:
                frame = await asyncio.wait_for(ws.receive(), timeout=cfg.idle_timeout_s)
            except TimeoutError:
                reason = f"no message for {cfg.idle_timeout_s:g} s (idle timeout): the episode ended unscored"
                record = public_record(env, reason, cfg.idle_timeout_s)
                self.expired.add(sid, record)
                await self._send(ws, _error("SESSION_EXPIRED", reason, record=record))
                await self._close(ws, 1001)
                return
            if frame["type"] == "websocket.disconnect":
                return
            text = frame.get("text")
            if text is None:
                size = len(frame.get("bytes") or b"")
                await self._send(
                    ws, _error("INVALID_JSON", f"binary frame of {size} bytes: send JSON text")
                )
                continue
            size = len(text)
            if size > cfg.max_message_bytes // 4 and len(text.encode()) > cfg.max_message_bytes:
                await self._send(
                    ws,
                    _error(
                        "MESSAGE_TOO_LARGE",
                        f"message of {len(text.encode())} bytes refused: at most "
                        f"{cfg.max_message_bytes} bytes",
                    ),
                )
                continue
            reply = await self._handle(env, text, size)
            if reply is None:  # "close"
                return
            await self._send(ws, reply, size)

    async def _handle(self, env: Any, text: str, size: int) -> dict[str, Any] | None:
        cfg = self.config
        small = size <= cfg.inline_parse_bytes
        msg = await decode(text, cfg.inline_parse_bytes)
        if isinstance(msg, str):
            return _error("INVALID_JSON", msg)
        kind = msg.get("type")
        data = msg.get("data", {})
        try:
            if kind == "step":
                action = (
                    _validate_action(data)
                    if small
                    else await asyncio.to_thread(_validate_action, data)
                )
                if isinstance(action, str):
                    return _error("VALIDATION_ERROR", action)
                obs = await env.step_async(action, inline=small)
                return {"type": "observation", "data": _serialize(obs)}
            if kind == "reset":
                kwargs = reset_options(data, self.factory.task_ids)
                obs = await env.reset_async(**kwargs)
                return {"type": "observation", "data": _serialize(obs)}
            if kind == "state":
                return {"type": "state", "data": env.state.model_dump()}
            if kind == "close":
                return None
            if kind == "mcp":
                return _error("UNKNOWN_TYPE", "MCP is not served on /ws by this server")
            return _error(
                "UNKNOWN_TYPE",
                f"unknown message type {str(kind)[:40]!r}: expected reset, step, state or close",
            )
        except BadRequest as e:
            return _error("VALIDATION_ERROR", str(e))
        except Exception as e:  # the env must not raise; if it does, say so and live on
            _log.exception("session step failed")
            return _error("EXECUTION_ERROR", f"{type(e).__name__}: {str(e)[:200]}")

    async def _send(self, ws: WebSocket, reply: dict[str, Any], size_hint: int = 0) -> None:
        if ws.application_state != WebSocketState.CONNECTED:
            return
        cfg = self.config
        data = reply.get("data", {})
        hint = size_hint
        if reply["type"] == "observation":
            o = data.get("observation", {})
            hint += sum(len(o.get(k, "")) for k in ("db_schema", "dialogue", "last"))
            hint += 64 * len(o.get("info", {}).get("messages", ()) or ())
        text = await encode(reply, cfg.inline_parse_bytes, hint)
        if len(text) > cfg.max_reply_bytes:
            text = await encode(
                _error(
                    "REPLY_TOO_LARGE",
                    f"the reply ({len(text)} characters) exceeds max_reply_bytes="
                    f"{cfg.max_reply_bytes}; the step was taken",
                ),
                cfg.inline_parse_bytes,
                0,
            )
        await ws.send_text(text)

    @staticmethod
    async def _close(ws: WebSocket, code: int) -> None:
        if ws.application_state == WebSocketState.CONNECTED:
            try:
                await ws.close(code)
            except (RuntimeError, WebSocketDisconnect):
                pass


def _serialize(obs: Any) -> dict[str, Any]:
    """OpenEnv's ``serialize_observation`` for our observation (fields as they are)."""
    d = dict(obs.__dict__)
    reward, done = d.pop("reward", None), d.pop("done", False)
    d.pop("metadata", None)
    return {"observation": d, "reward": reward, "done": done}
