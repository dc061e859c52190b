"""Execution checks every synthesis step uses (:class:`Verifier`).

Contract
- :meth:`Verifier.rows` runs one read statement in clarisql's read-only sandbox
  (:class:`clarisql.envs.database.Session`, the same one episodes use) and returns its rows, or
  ``None`` on any error, refusal, timeout (``time_budget_s``) or result larger than ``max_rows``.
  It never raises. :meth:`Verifier.error` returns the database's message for a failing statement
  (recorded for rejected drafts).
- :meth:`Verifier.write_digest` replays an action list in a private writable session and returns
  the final state's key (:meth:`clarisql.envs.state_digest.StateDigest.key`, what the
  environment compares; no image table is hashed), ``None`` if any action fails;
  :meth:`Verifier.base_digest` is the untouched database's key.
- :func:`same_answer` is the environment's own Pass@1 comparison
  (:func:`clarisql.rewards.match.execution_match`), so "the naive reading gives a different
  answer" means exactly what the reward will see. :func:`is_trivial` flags empty / all-NULL /
  all-zero answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clarisql.envs.database import SessionLimits, get_image
from clarisql.envs.digest import DigestConfig
from clarisql.envs.state_digest import image_state, session_state
from clarisql.rewards.match import execution_match


def is_trivial(rows: Sequence[Sequence[Any]] | None) -> bool:
    """Empty, or every value NULL / 0 / ''  (an answer that says nothing)."""
    return not rows or all(all(v is None or v == 0 or v == "" for v in r) for r in rows)


def same_answer(
    a: Sequence[Sequence[Any]] | None, b: Sequence[Sequence[Any]] | None, ordered: bool = False
) -> bool:
    """Whether the environment's Pass@1 comparison takes ``a`` and ``b`` as the same answer."""
    return execution_match(a, b, ordered=ordered)


class Verifier:
    """Runs candidate gold / naive SQL and golden action lists against one database."""

    def __init__(self, db_path: Path, time_budget_s: float = 2.0, max_rows: int = 200):
        self.db_path = Path(db_path)
        self.image = get_image(self.db_path)
        self.time_budget_s = time_budget_s
        self.max_rows = max_rows
        self._limits = SessionLimits(timeout_s=time_budget_s, max_rows=max_rows + 1)
        self._write_limits = SessionLimits(timeout_s=time_budget_s)
        # the digest the environment takes for a file suite (DatabaseSpec default)
        self.digest_config = DigestConfig()
        self.executed = 0
        self._last_error: str | None = None
        self._cache: dict[str, tuple[tuple | None, str | None]] = {}

    def rows(self, sql: str) -> list[tuple] | None:
        """The statement's rows, or ``None`` (error, refusal, timeout, > ``max_rows``).

        Results are cached per statement (the database is read-only here, so a statement's
        answer cannot change; layers re-run the drafts' gold queries).
        """
        hit = self._cache.get(sql)
        if hit is not None:
            self._last_error = hit[1]
            return None if hit[0] is None else list(hit[0])
        out = self._rows(sql)
        if len(self._cache) >= 20_000:
            self._cache.clear()
        self._cache[sql] = (None if out is None else tuple(out), self._last_error)
        return out

    def _rows(self, sql: str) -> list[tuple] | None:
        self.executed += 1
        try:
            with self.image.session(writable=False, limits=self._limits) as s:
                res = s.execute(sql)
        except Exception as e:  # the sandbox never raises for SQL; this is a last guard
            self._last_error = f"{type(e).__name__}: {e}"
            return None
        if not res.ok:
            self._last_error = res.error
            return None
        if not res.columns and res.is_write:
            self._last_error = "the statement returns no rows"
            return None
        if res.truncated or len(res.rows) > self.max_rows:
            self._last_error = f"the answer has more than {self.max_rows} rows"
            return None
        self._last_error = None
        return [tuple(r) for r in res.rows]

    def error(self, sql: str) -> str | None:
        """The database's error message for ``sql`` (``None`` when it runs and passes)."""
        return None if self.rows(sql) is not None else self._last_error

    @property
    def last_error(self) -> str | None:
        """The reason the last :meth:`rows` call returned ``None``."""
        return self._last_error

    def write_digest(self, actions: list[str]) -> str | None:
        """Final-state digest after running ``actions`` in a private writable session."""
        try:
            with self.image.session(writable=True, limits=self._write_limits) as s:
                for a in actions:
                    res = s.execute(a)
                    if not res.ok:
                        self._last_error = res.error
                        return None
                return session_state(s, self.digest_config).key()
        except Exception as e:  # last guard, see rows()
            self._last_error = f"{type(e).__name__}: {e}"
            return None

    def base_digest(self) -> str:
        """Digest of the untouched database (same configuration as :meth:`write_digest`)."""
        return image_state(self.image, self.digest_config).key()


__all__ = ["Verifier", "is_trivial", "same_answer"]
