"""``ServeConfig``: everything ``clarisql serve`` and :func:`make_app` take (one dataclass)."""

from __future__ import annotations

import os
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
        max_message_bytes: the largest WebSocket message or HTTP body taken (checked before
            anything is parsed): a larger message gets a one-line error (the WebSocket session
            lives on), a larger body a 413. The WebSocket protocol itself closes a connection
            whose single message exceeds four times this (``1009``), unread.
        inline_parse_bytes: messages up to this size are parsed, validated and their replies
            serialised on the event loop; larger ones on a thread (and their steps never inline).
        max_reply_bytes: a reply larger than this is not sent: an error says so (bounded by the
            input caps, it does not happen with the env's own result caps).
        header_timeout_s: a connection must send a complete request head (and, on the HTTP
            session routes, its body) within this many seconds, else it is closed (slow clients
            cannot hold connections open for ever).
        memory_budget_mb: new sessions are refused (503 / ``CAPACITY_REACHED``) while the
            server's resident memory is above this; ``None``: 80% of the machine's memory.
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
    max_message_bytes: int = 1 << 20
    inline_parse_bytes: int = 64 << 10
    max_reply_bytes: int = 16 << 20
    header_timeout_s: float = 10.0
    memory_budget_mb: float | None = None

    def __post_init__(self) -> None:
        # checked here, before any suite is loaded or socket opened (one line each)
        if isinstance(self.port, bool) or not isinstance(self.port, int):
            raise ValueError(f"port must be an integer, got {self.port!r}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {self.port}")
        for name in ("max_sessions", "max_message_bytes", "inline_parse_bytes", "max_reply_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("idle_timeout_s", "memory_budget_mb"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and 0 < value < 1e12):
                raise ValueError(f"{name} must be a positive number of seconds/MB or None")
        if not (isinstance(self.header_timeout_s, (int, float)) and 0 < self.header_timeout_s):
            raise ValueError(f"header_timeout_s must be positive, got {self.header_timeout_s!r}")
        if not (isinstance(self.inline_slice_ms, (int, float)) and 0 <= self.inline_slice_ms < 1e6):
            raise ValueError(f"inline_slice_ms must be >= 0, got {self.inline_slice_ms!r}")

    def memory_budget_bytes(self) -> int:
        """The resident-memory budget in bytes (see ``memory_budget_mb``)."""
        if self.memory_budget_mb is not None:
            return int(self.memory_budget_mb * 1024 * 1024)
        try:
            pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
            return int(pages * page * 0.8)
        except (ValueError, OSError, AttributeError):
            return 1 << 62  # (unknown: no budget)
