"""``make_app``: OpenEnv's FastAPI app for clarisql, plus addressable HTTP sessions; ``serve``."""

from __future__ import annotations

from typing import Any

from fastapi import Body, FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse
from openenv.core.env_server import create_app
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import ConcurrencyConfig
from pydantic import ValidationError

from clarisql.envs.server.config import ServeConfig
from clarisql.envs.server.environment import env_factory
from clarisql.envs.server.models import ClarisqlAction, ClarisqlObservation
from clarisql.envs.server.sessions import AtCapacity, SessionRegistry, UnknownSession

_RESET_KEYS = ("seed", "episode_id", "task_id", "task_index", "dialogue_deltas")


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
    registry = SessionRegistry(factory, config.max_sessions, config.idle_timeout_s)
    app.state.clarisql_sessions = registry
    app.router.on_shutdown.append(registry.close_all)
    _add_session_routes(app, registry)
    _refuse_mcp(app)
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
    ``openenv validate`` checks) and hold no slot, environment or thread.
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
        try:
            body = await request.json()
        except ValueError:
            body = None
        rid = body.get("id") if isinstance(body, dict) else None
        return refusal(rid if isinstance(rid, (str, int)) else None)

    @app.websocket("/mcp")
    async def mcp_ws_refused(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_json(refusal(None))
        await websocket.close(code=1008, reason="clarisql serves no MCP tools")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": message})


def _reset_kwargs(body: Any) -> dict[str, Any] | str:
    if body is None:
        return {}
    if not isinstance(body, dict):
        return "the body must be a JSON object of reset options (seed, task_id, task_index)"
    unknown = sorted(set(body) - set(_RESET_KEYS))
    if unknown:
        return f"unknown reset options {unknown}; expected some of {list(_RESET_KEYS)}"
    return dict(body)


def _add_session_routes(app: FastAPI, registry: SessionRegistry) -> None:
    def unknown(sid: str) -> JSONResponse:
        return _error(404, f"unknown session id {sid!r}: closed, expired or never opened")

    @app.post("/sessions", tags=["clarisql sessions"])
    def open_session(body: Any = Body(default=None)) -> Any:
        kwargs = _reset_kwargs(body)
        if isinstance(kwargs, str):
            return _error(422, kwargs)
        try:
            sid, env = registry.open()
        except AtCapacity as e:
            return _error(503, str(e))
        try:
            obs = env.reset(**kwargs)
        except (KeyError, ValueError, TypeError) as e:
            registry.close(sid)
            return _error(422, f"reset failed: {e}")
        return {"session_id": sid, **serialize_observation(obs)}

    @app.post("/sessions/{sid}/reset", tags=["clarisql sessions"])
    def reset_session(sid: str, body: Any = Body(default=None)) -> Any:
        kwargs = _reset_kwargs(body)
        if isinstance(kwargs, str):
            return _error(422, kwargs)
        try:
            env = registry.get(sid)
        except UnknownSession:
            return unknown(sid)
        try:
            return serialize_observation(env.reset(**kwargs))
        except (KeyError, ValueError, TypeError) as e:
            return _error(422, f"reset failed: {e}")

    @app.post("/sessions/{sid}/step", tags=["clarisql sessions"])
    async def step_session(sid: str, body: Any = Body(default=None)) -> Any:
        # (async: a quick step is taken on the event loop, any other on a worker thread, as
        # on the WebSocket: ClarisqlEnvironment.step_async)
        if not isinstance(body, dict) or "action" not in body:
            return _error(422, 'the body must be {"action": {...}} or {"action": {"text": "..."}}')
        try:
            action = ClarisqlAction.model_validate(body["action"])
        except ValidationError as e:
            return _error(422, f"malformed action: {e.errors(include_url=False)}")
        try:
            env = registry.get(sid)
        except UnknownSession:
            return unknown(sid)
        return serialize_observation(await env.step_async(action))

    @app.get("/sessions/{sid}/state", tags=["clarisql sessions"])
    def session_state(sid: str) -> Any:
        try:
            return registry.get(sid).state.model_dump()
        except UnknownSession:
            return unknown(sid)

    @app.delete("/sessions/{sid}", tags=["clarisql sessions"])
    def close_session(sid: str) -> Any:
        try:
            registry.close(sid)
        except UnknownSession:
            return unknown(sid)
        return {"closed": sid}


def uvicorn_options(config: ServeConfig) -> dict[str, Any]:
    """The keyword arguments :func:`serve` gives ``uvicorn.run`` / ``uvicorn.Config``."""
    return {
        "host": config.host,
        "port": config.port,
        "log_level": "warning",
        "ws_per_message_deflate": config.ws_compression,
    }


def serve(config: ServeConfig) -> None:
    """Run the server until interrupted (uvicorn, one process)."""
    import uvicorn

    uvicorn.run(make_app(config), **uvicorn_options(config))
