"""``make_app``: OpenEnv's FastAPI app for clarisql, plus addressable HTTP sessions; ``serve``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse
from openenv.core.env_server import create_app
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import ConcurrencyConfig
from starlette.routing import WebSocketRoute

from clarisql.envs.server.config import ServeConfig
from clarisql.envs.server.environment import SessionFactory, env_factory
from clarisql.envs.server.models import ClarisqlAction, ClarisqlObservation
from clarisql.envs.server.options import BadRequest, reset_options
from clarisql.envs.server.sessions import (
    AtCapacity,
    ExpiredRecords,
    SessionRegistry,
    UnknownSession,
)
from clarisql.envs.server.transport import BodyLimit, deadline_protocol, decode
from clarisql.envs.server.websocket import WebSocketSessions, _validate_action


def make_app(config: ServeConfig) -> FastAPI:
    """The server application (see the package docstring for the protocol)."""
    factory = env_factory(config)
    app = create_app(
        factory,
        ClarisqlAction,
        ClarisqlObservation,
        env_name="clarisql",
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=config.max_sessions, session_timeout=config.idle_timeout_s
        ),
    )
    expired = ExpiredRecords()
    registry = SessionRegistry(factory, config.idle_timeout_s, expired)
    app.state.clarisql_sessions = registry
    app.state.clarisql_slots = factory.slots
    app.state.clarisql_expired = expired
    _replace_websocket(app, WebSocketSessions(factory, config, expired))
    _add_session_routes(app, registry, factory, config)
    _add_error_handlers(app)
    _refuse_mcp(app)
    reaper: dict[str, asyncio.Task] = {}

    async def start_reaper() -> None:
        reaper["task"] = asyncio.create_task(registry.run_reaper())

    async def stop_reaper() -> None:
        task = reaper.pop("task", None)
        if task is not None:
            task.cancel()
        registry.close_all()

    app.router.on_startup.append(start_reaper)
    app.router.on_shutdown.append(stop_reaper)
    # bodies capped (and read within a deadline) before any route parses them
    app.add_middleware(
        BodyLimit, max_bytes=config.max_message_bytes, timeout_s=config.header_timeout_s
    )
    return app


#: JSON-RPC "method not found": what ``/mcp`` answers every request with
MCP_REFUSAL_CODE = -32601
MCP_REFUSAL = (
    "clarisql serves no MCP tools: its actions are OpenEnv steps (WebSocket /ws, or HTTP "
    "/sessions); POST /mcp opens no session"
)


def _refuse_mcp(app: FastAPI) -> None:
    """Replace openenv-core's ``/mcp`` routes with a refusal that opens nothing.

    openenv-core's ``POST /mcp`` made an environment for every request and its
    ``openenv/session/create`` method reserved a WebSocket session slot for an environment
    with no MCP tools (eight such calls filled an eight-slot pool); the ``/mcp`` WebSocket
    made a session too. Here both answer a JSON-RPC error (still a JSON-RPC 2.0 payload, as
    ``openenv validate`` checks) and hold no slot, environment or thread. Only a small body is
    parsed (for its ``id``); the body limit applies before this route as before every other.
    """
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != "/mcp"]

    def refusal(request_id: Any) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": MCP_REFUSAL_CODE, "message": MCP_REFUSAL},
        }

    @app.post("/mcp", tags=["MCP"])
    async def mcp_refused(request: Request) -> Any:
        raw = await request.body()
        body: Any = None
        if len(raw) <= 4096:
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):
                body = None
        rid = body.get("id") if isinstance(body, dict) else None
        return refusal(rid if isinstance(rid, (str, int)) else None)

    @app.websocket("/mcp")
    async def mcp_ws_refused(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_json(refusal(None))
        await websocket.close(code=1008, reason="clarisql serves no MCP tools")


def _replace_websocket(app: FastAPI, sessions: WebSocketSessions) -> None:
    """OpenEnv's ``/ws`` route replaced by ours (same protocol, bounded; see websocket.py)."""
    app.router.routes[:] = [
        r for r in app.router.routes if not (isinstance(r, WebSocketRoute) and r.path == "/ws")
    ]
    app.add_api_websocket_route("/ws", sessions.serve)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AtCapacity)
    async def at_capacity(request: Request, exc: AtCapacity) -> JSONResponse:
        return _error(503, str(exc))

    @app.exception_handler(BadRequest)
    async def bad_request(request: Request, exc: BadRequest) -> JSONResponse:
        return _error(422, str(exc))


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": message, **extra})


async def _body(request: Request, inline_bytes: int) -> Any:
    """The request's JSON body (already capped by BodyLimit), parsed on a thread when large;
    ``None`` when empty; :class:`BadRequest` when malformed."""
    raw = await request.body()
    if not raw.strip():
        return None
    msg = await decode(raw, inline_bytes)
    if isinstance(msg, str):
        raise BadRequest(msg)
    return msg


def _add_session_routes(
    app: FastAPI, registry: SessionRegistry, factory: SessionFactory, config: ServeConfig
) -> None:
    inline = config.inline_parse_bytes

    def gone(sid: str) -> JSONResponse:
        record = registry.expired.get(sid)
        if record is not None:
            return _error(410, f"session {sid[:64]!r} expired: {record['reason']}", record=record)
        return _error(404, f"unknown session id {sid[:64]!r}: closed, expired or never opened")

    @app.post("/sessions", tags=["clarisql sessions"])
    async def open_session(request: Request) -> Any:
        kwargs = reset_options(await _body(request, inline), factory.task_ids)  # before a slot
        sid, env = await asyncio.to_thread(registry.open)
        try:
            obs = await env.reset_async(**kwargs)
        except BaseException:
            await asyncio.to_thread(registry.close, sid)
            raise
        return {"session_id": sid, **serialize_observation(obs)}

    @app.post("/sessions/{sid}/reset", tags=["clarisql sessions"])
    async def reset_session(sid: str, request: Request) -> Any:
        kwargs = reset_options(await _body(request, inline), factory.task_ids)
        try:
            with registry.using(sid) as env:
                return serialize_observation(await env.reset_async(**kwargs))
        except UnknownSession:
            return gone(sid)

    @app.post("/sessions/{sid}/step", tags=["clarisql sessions"])
    async def step_session(sid: str, request: Request) -> Any:
        # (a quick step is taken on the event loop, any other on the session's thread, as on
        # the WebSocket: ClarisqlEnvironment.step_async; large bodies parsed on a thread)
        raw_size = len(await request.body())  # (already read and capped by BodyLimit)
        body = await _body(request, inline)
        if not isinstance(body, dict) or "action" not in body:
            return _error(422, 'the body must be {"action": {...}} or {"action": {"text": "..."}}')
        small = raw_size <= inline
        action = (
            _validate_action(body["action"])
            if small
            else await asyncio.to_thread(_validate_action, body["action"])
        )
        if isinstance(action, str):
            return _error(422, action)
        try:
            with registry.using(sid) as env:
                obs = await env.step_async(action, inline=small)
        except UnknownSession:
            return gone(sid)
        return serialize_observation(obs)

    @app.get("/sessions/{sid}/state", tags=["clarisql sessions"])
    def session_state(sid: str) -> Any:
        try:
            return registry.get(sid).state.model_dump()
        except UnknownSession:
            return gone(sid)

    @app.delete("/sessions/{sid}", tags=["clarisql sessions"])
    def close_session(sid: str) -> Any:
        try:
            registry.close(sid)
        except UnknownSession:
            return gone(sid)
        return {"closed": sid}


def uvicorn_options(config: ServeConfig) -> dict[str, Any]:
    """The keyword arguments :func:`serve` gives ``uvicorn.run`` / ``uvicorn.Config``."""
    return {
        "host": config.host,
        "port": config.port,
        "log_level": "warning",
        "ws_per_message_deflate": config.ws_compression,
        # a message past 4x the cap closes the connection unread (1009); up to it, an error
        "ws_max_size": 4 * config.max_message_bytes,
        "http": deadline_protocol(config.header_timeout_s),
        "timeout_keep_alive": 5,
        # connections at once (each WebSocket session is one); past it, HTTP requests get 503
        "limit_concurrency": config.max_sessions + 256,
    }


def serve(config: ServeConfig) -> None:
    """Run the server until interrupted (uvicorn, one process)."""
    import uvicorn

    uvicorn.run(make_app(config), **uvicorn_options(config))
