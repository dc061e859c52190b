"""Gold answers and gold final states, computed lazily and cached per process.

- :func:`gold_rows` runs a task's ``gold_sql`` on the untouched image (or returns
  ``gold_answer`` when the task carries it).
- :func:`gold_alternatives` runs each of a task's ``gold_alternatives`` the same way (any-of
  scoring: :mod:`clarisql.rewards.alternatives`).
- :func:`gold_ordered` says whether row order matters: the task's flag, else whether the gold
  query's outermost SELECT has an ORDER BY (parsed with sqlglot).
- :func:`gold_state` replays ``gold_actions`` on a fresh copy-on-write session and describes the
  result as changes to the image (:func:`clarisql.envs.state.deferred.session_state`; no image
  table is hashed). Cached by (database, actions, digest config).
- :func:`gold_digest` is the task's ``gold_digest`` when it carries one (an absolute digest: the
  episode's final digest is then absolute too), else the gold state's
  :meth:`~clarisql.envs.state.deferred.StateDigest.key`.
"""

from __future__ import annotations

import threading
from typing import Any

import sqlglot
from sqlglot.tokens import TokenType

from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
from clarisql.envs.state.deferred import StateDigest, session_state
from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.tasks import Task

_LOCK = threading.Lock()
_ROWS: dict[tuple[str, str], list[list[Any]]] = {}
_ORDERED: dict[str, bool] = {}
_STATES: dict[tuple[Any, ...], StateDigest] = {}
_TOKENIZER = sqlglot.Dialect.get_or_raise("sqlite")
_GOLD_LIMITS = SessionLimits(timeout_s=60.0, max_rows=1_000_000, max_bytes=1 << 30)


class GoldError(RuntimeError):
    """The gold SQL or a golden action failed on its database: the task is broken."""


def gold_rows(task: Task, image: DatabaseImage) -> list[list[Any]] | None:
    if task.gold_answer is not None:
        return task.gold_answer
    if not task.gold_sql:
        return None
    return _rows(task, image, task.gold_sql, "gold SQL")


def gold_alternatives(task: Task, image: DatabaseImage) -> list[dict[str, Any]]:
    """``[{"rows", "ordered"}]`` for each of the task's ``gold_alternatives`` (cached)."""
    return [
        {"rows": _rows(task, image, sql, f"gold alternative {i}"), "ordered": _sql_ordered(sql)}
        for i, sql in enumerate(task.gold_alternatives)
    ]


def _rows(task: Task, image: DatabaseImage, sql: str, what: str) -> list[list[Any]]:
    key = (image.key, sql)
    with _LOCK:
        hit = _ROWS.get(key)
    if hit is not None:
        return hit
    with image.session(writable=False, limits=_GOLD_LIMITS) as s:
        res = s.execute(sql)
    if not res.ok:
        raise GoldError(f"task {task.id!r}: {what} failed: {res.error}")
    rows = [list(r) for r in res.rows]
    with _LOCK:
        _ROWS[key] = rows
    return rows


def gold_ordered(task: Task) -> bool:
    if task.gold_ordered is not None:
        return task.gold_ordered
    return _sql_ordered(task.gold_sql)


def _outer_order_by(sql: str) -> bool:
    """Whether the outermost query has an ORDER BY: an ``ORDER`` token outside every bracket.

    Tokenizing is an order of magnitude cheaper than parsing (a cold ``clarisql eval`` asked
    this once per task and spent most of its per-episode overhead in sqlglot's parser); window
    ``OVER (ORDER BY ...)``, subqueries and CTE bodies sit inside brackets and do not count.
    """
    depth = 0
    for tok in _TOKENIZER.tokenize(sql):
        tt = tok.token_type
        if tt == TokenType.L_PAREN:
            depth += 1
        elif tt == TokenType.R_PAREN:
            depth -= 1
        elif tt == TokenType.ORDER_BY and depth == 0:
            return True
    return False


def _sql_ordered(sql: str | None) -> bool:
    if not sql:
        return False
    with _LOCK:
        hit = _ORDERED.get(sql)
    if hit is not None:
        return hit
    try:
        ordered = _outer_order_by(sql)
    except sqlglot.errors.SqlglotError:
        ordered = " order by " in " ".join(sql.lower().split())
    with _LOCK:
        _ORDERED[sql] = ordered
    return ordered


def gold_digest(task: Task, image: DatabaseImage, config: DigestConfig) -> str | None:
    if task.gold_digest is not None:
        return task.gold_digest
    if not task.writable or not task.gold_actions:
        return None
    return gold_state(task, image, config).key()


def gold_state(task: Task, image: DatabaseImage, config: DigestConfig) -> StateDigest:
    """The gold state: ``gold_actions`` replayed on a fresh session, once per (database,
    actions, digest config) and process (the final digest and the state difference both read
    it). Raises :class:`GoldError` when a golden action fails."""
    key = (image.key, tuple(task.gold_actions), config.key())
    with _LOCK:
        hit = _STATES.get(key)
    if hit is not None:
        return hit
    with image.session(writable=True, limits=_GOLD_LIMITS) as s:
        for i, sql in enumerate(task.gold_actions):
            res = s.execute(sql)
            if not res.ok:
                raise GoldError(f"task {task.id!r}: golden action {i} failed: {res.error}")
        state = session_state(s, config)
    with _LOCK:
        _STATES[key] = state
    return state
