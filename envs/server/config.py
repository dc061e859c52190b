"""``ServeConfig``: everything ``clarisql serve`` and :func:`make_app` take (one dataclass)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServeConfig:
    """What the server serves and how many sessions it keeps.

    Attributes:
        suite: suite name or task file, as for ``ClarifySQLEnv``.
        suite_kwargs: keyword arguments for the suite loader (e.g. ``{"data": DIR}``).
        env_kwargs: further ``ClarifySQLEnv`` keyword arguments (``reward``, ``simulator``,
            ``max_turns``, ...), the same for every session.
        host, port: where to listen (loopback by default).
        max_sessions: live sessions at most, per transport (WebSocket, HTTP sessions).
        idle_timeout_s: a session unused this long is closed (``None``: never).
        ws_compression: accept WebSocket per-message compression (permessage-deflate) when a
            client offers it. Off by default: a step's reply is a few hundred bytes, and
            compressing it cost more than sending it (loopback, measured: ~25 µs of server CPU
            and ~70 µs of latency per step, both ends inflating and deflating); turn it on for
            slow links (a reset's schema, ~18k characters, compresses well).
        inline_slice_ms: a step that runs one small read statement and calls no model is
            taken on the event loop when its SQL finishes within this many milliseconds (else
            it is stopped, nothing changed, and taken again on the session's thread); 0 sends
            every step to the thread. Inline, values, patterns and results are capped (see
            ``clarisql.envs.sandbox.statements.INLINE_MAX_VALUE``), so a step holds the loop up about
            this long plus the slice guard's tick (5 ms) at most; a small step saves the hop to
            a thread and back.
    """

    suite: str = "builtin"
    suite_kwargs: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 8000
    max_sessions: int = 2048
    idle_timeout_s: float | None = 600.0
    ws_compression: bool = False
    inline_slice_ms: float = 2.0
