"""The environment as a network service: an OpenEnv-compatible server and its Python client.

Contract
- :func:`make_app` builds a FastAPI application with openenv-core's own ``create_app``, so
  the wire protocol is OpenEnv's (``/health``, ``/metadata``, ``/schema``, ``/reset``,
  ``/step``, ``/state``, ``/mcp`` and the ``/ws`` WebSocket with ``reset``/``step``/``state``/
  ``close`` messages) and ``openenv validate --url http://HOST:PORT`` passes.
- A WebSocket connection is one session with its own :class:`~clarisql.envs.env.ClarifySQLEnv`
  (its own database session, simulator and episode); sessions share only the loaded suite and
  the read-only database images. Stateless HTTP ``/reset``/``/step`` (OpenEnv's) each use a
  fresh env; for trainers that cannot hold a WebSocket, ``/sessions`` adds HTTP sessions with
  ids (``POST /sessions``, ``POST /sessions/{id}/step``, ``GET /sessions/{id}/state``,
  ``DELETE /sessions/{id}``); an unknown id is a 404 with a one-line ``error``.
- Observations carry exactly what the in-process env returns: the Gymnasium observation
  (``schema`` is sent as ``db_schema``: pydantic reserves ``schema``), ``reward``, ``done``
  (terminated or truncated), ``truncated`` and ``info`` (made JSON-safe). They are whole by
  default (what a generic OpenEnv client expects); with the reset option
  ``dialogue_deltas=True`` (what clarisql's clients send) the schema comes with ``reset`` only
  and a step's ``dialogue`` is what the step added (from character ``dialogue_start`` of the
  whole dialogue). The clients rebuild both:
  :class:`~clarisql.envs.server.client.RemoteClarifySQLEnv` gives back the same ``(obs, reward,
  terminated, truncated, info)`` tuples as ``ClarifySQLEnv.step``. ``state.episode_id`` is the
  caller's or a new random id.
- ``/mcp`` answers every JSON-RPC request with a refusal (clarisql has no MCP tools) and opens
  no environment or session slot (:func:`~clarisql.envs.server.app.make_app`).
- A step that runs one small read statement, calls no model and cannot end the episode is
  taken on the event loop when its SQL finishes within ``ServeConfig.inline_slice_ms`` (else it
  is stopped with nothing changed and taken on the session's own thread, like every other
  step): values, patterns and results are capped inline, so one step holds the loop up about
  the slice plus the slice guard's tick at most.
- Bounded (see :mod:`~clarisql.envs.server.sessions`, :mod:`~clarisql.envs.server.websocket`,
  :mod:`~clarisql.envs.server.transport` and ``docs/hardening.md``): at most ``max_sessions``
  live environments over every path together (a counted slot from before an environment is
  built until its ``close()`` returned); reset options checked before a session exists; message
  and body sizes checked before parsing, and values counted before ``json.loads``; large
  messages parsed and replies serialised off the event loop; every WebSocket frame answered
  (malformed ones with an ``error``, the session lives on); idle sessions reaped on a timer and
  reported as expired with their record (``410`` / ``SESSION_EXPIRED``), never ``done`` with a
  reward; slow clients cut at a request-head deadline; new sessions refused over a memory
  budget.

Needs the ``serve`` extra (openenv-core, fastapi, uvicorn, websockets); ``clarisql serve``
(:mod:`clarisql.envs.server.commands`) starts it. Depends on ``clarisql.envs`` only.
"""

from clarisql.envs.server.config import ServeConfig

__all__ = ["ServeConfig"]
