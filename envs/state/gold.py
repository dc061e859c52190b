"""Gold answers and gold final states, computed lazily and cached per process.

- :func:`gold_rows` runs a task's ``gold_sql`` on the untouched image (or returns
  ``gold_answer`` when the task carries it).
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
from sqlglot import exp

from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
from clarisql.envs.state.deferred import StateDigest, session_state
from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.tasks import Task

_LOCK = threading.Lock()
_ROWS: dict[tuple[str, str], list[list[Any]]] = {}
_ORDERED: dict[str, bool] = {}
_STATES: dict[tuple[Any, ...], StateDigest] = {}
_GOLD_LIMITS = SessionLimits(timeout_s=60.0, max_rows=1_000_000, max_bytes=1 << 30)


class GoldError(RuntimeError):
    """The gold SQL or a golden action failed on its database: the task is broken."""


def gold_rows(task: Task, image: DatabaseImage) -> list[list[Any]] | None:
    if task.gold_answer is not None:
        return task.gold_answer
    if not task.gold_sql:
        return None
    key = (image.key, task.gold_sql)
    with _LOCK:
        hit = _ROWS.get(key)
    if hit is not None:
        return hit
    with image.session(writable=False, limits=_GOLD_LIMITS) as s:
        res = s.execute(task.gold_sql)
    if not res.ok:
        raise GoldError(f"task {task.id!r}: gold SQL failed: {res.error}")
    rows = [list(r) for r in res.rows]
    with _LOCK:
        _ROWS[key] = rows
    return rows


def gold_ordered(task: Task) -> bool:
    if task.gold_ordered is not None:
        return task.gold_ordered
    sql = task.gold_sql
    if not sql:
        return False
    with _LOCK:
        hit = _ORDERED.get(sql)
    if hit is not None:
        return hit
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
        ordered = (
            tree.args.get("order") is not None
            if isinstance(tree, (exp.Select, exp.Union))
            else False
        )
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
