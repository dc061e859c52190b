"""Execution checks every synthesis step uses (:class:`Verifier`).

Contract
- :meth:`Verifier.rows` runs one read statement in clarisql's read-only sandbox
  (:class:`clarisql.envs.sandbox.database.Session`, the same one episodes use) and returns its rows, or
  ``None`` on any error, refusal, timeout or result larger than ``max_rows``. It never raises.
  The budget is counted in SQLite VM steps, not seconds: a statement is kept only when it
  finishes within :data:`STEP_SHARE` of the episode's statement budget ``step_budget``
  (:attr:`clarisql.envs.sandbox.database.SessionLimits.max_vm_steps`), so a verdict never depends on
  the machine, its load or the number of workers, and every kept gold query replays in an
  episode with 2x headroom in steps. The wall-clock cap (``time_budget_s`` x
  :data:`WALL_GUARD`, at least :func:`~clarisql.envs.sandbox.limits.wall_cap_s` of the kept
  budget: never reached first even on a machine 20x slower than a quiet one) only stops runaway
  single operations that the step count cannot see, with the same message as the count.
  :meth:`Verifier.error` returns the database's message for a failing statement (recorded for
  rejected drafts).
- Parallel: with ``workers > 1``, :meth:`Verifier.prefetch` starts statements on worker threads
  (one sandbox session, hence one SQLite connection, per statement; apsw releases the GIL while
  SQLite runs), and :meth:`Verifier.rows` then returns their results. A statement's result does
  not depend on which thread ran it or when, so callers that consume results in their own
  deterministic order produce the same output with any number of workers. With ``workers=1``
  :meth:`Verifier.prefetch` does nothing and every statement runs in the caller's thread.
  Several threads may share one verifier (the pipeline runs its layers side by side):
  :attr:`Verifier.last_error` is per thread.
- :meth:`Verifier.write_digest` replays an action list in a private writable session and returns
  the final state's key (:meth:`clarisql.envs.state.deferred.StateDigest.key`, what the
  environment compares; no image table is hashed), ``None`` if any action fails;
  :meth:`Verifier.base_digest` is the untouched database's key.
- :func:`same_answer` is the environment's own Pass@1 comparison
  (:func:`clarisql.rewards.match.execution_match`), so "the naive reading gives a different
  answer" means exactly what the reward will see. :func:`is_trivial` flags empty / all-NULL /
  all-zero answers.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clarisql.envs.sandbox.database import SessionLimits, get_image
from clarisql.envs.sandbox.limits import ConnectionMap, wall_cap_s
from clarisql.envs.state.deferred import image_state, session_state
from clarisql.envs.state.digest import DigestConfig
from clarisql.rewards.match import execution_match


def is_trivial(rows: Sequence[Sequence[Any]] | None) -> bool:
    """Empty, or every value NULL / 0 / ''  (an answer that says nothing)."""
    return not rows or all(all(v is None or v == 0 or v == "" for v in r) for r in rows)


def same_answer(
    a: Sequence[Sequence[Any]] | None, b: Sequence[Sequence[Any]] | None, ordered: bool = False
) -> bool:
    """Whether the environment's Pass@1 comparison takes ``a`` and ``b`` as the same answer."""
    return execution_match(a, b, ordered=ordered)


def echoes_question(rows: list[tuple], question: str) -> bool:
    """Every value of the answer is written in the question (``the title of the film whose
    title is 'X'`` over a 1:1 copy of the table): ``SELECT 'X'`` would pass without a query.
    Every layer that keeps an answerable read with its question checks this beside
    :func:`is_trivial`."""
    text = question.casefold()
    for v in (v for r in rows for v in r):
        if v is None or isinstance(v, bytes):
            return False
        word = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        if not re.search(r"(?<!\w)" + re.escape(word.casefold()) + r"(?!\w)", text):
            return False
    return True


#: The wall-clock safety cap of a verification statement, in multiples of ``time_budget_s``:
#: far above what the step budget allows on a quiet machine, so that only a statement stuck in
#: one long SQLite operation (which the step count cannot see) ever meets it.
WALL_GUARD = 10.0
#: The share of the episode's step budget a kept statement may use: an agent replays gold SQL
#: under the episode's budget, so a gold query keeps 2x headroom.
STEP_SHARE = 0.5
#: Default episode statement budget in SQLite VM steps (the sandbox's default).
DEFAULT_STEP_BUDGET = SessionLimits().max_vm_steps or 100_000_000


#: SQLite's memory-mapped I/O for the verifier's read-only connections (bytes of the file):
#: a scan then reads the pages in place instead of copying them through a 2 MB page cache
#: (about a fifth less CPU on statements over a 500k-row table). Results do not change.
MMAP_BYTES = 1 << 30
#: read-only connections whose memory map is set (pooled connections keep it)
_MAPPED = ConnectionMap()


def _mapped(s: Any) -> None:
    conn = s.connection
    if _MAPPED.get(conn) is None:
        with s.trusted() as raw:
            raw.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        _MAPPED[conn] = True


#: how the verifier's budget message begins (:attr:`Verifier.over_budget`)
_OVER = "statement too slow"


class Verifier:
    """Runs candidate gold / naive SQL and golden action lists against one database."""

    #: SQLite VM steps between two calls of the sandbox's progress handler at most (episodes:
    #: 1,000). The handler is Python: while another thread holds the GIL (planning the next
    #: drafts, a layer's own work) each call waits up to the interpreter's switch interval
    #: (5 ms), which stalled long statements on worker threads; so calls are rare (a budget is
    #: counted in at least 20 of them).
    PROGRESS_STEPS = 5_000_000

    def __init__(
        self,
        db_path: Path,
        time_budget_s: float = 2.0,
        max_rows: int = 200,
        workers: int = 1,
        step_budget: int = DEFAULT_STEP_BUDGET,
    ):
        self.db_path = Path(db_path)
        self.image = get_image(self.db_path)
        self.time_budget_s = time_budget_s
        self.step_budget = int(step_budget)
        self.max_rows = max_rows
        self.workers = max(1, int(workers))
        kept = max(1, int(self.step_budget * STEP_SHARE))
        wall = max(time_budget_s * WALL_GUARD, wall_cap_s(kept))
        self._limits = SessionLimits(
            timeout_s=wall,
            max_rows=max_rows + 1,
            progress_steps=max(1, min(self.PROGRESS_STEPS, kept // 20)),
            max_vm_steps=kept,
        )
        #: the limits of a private writable session (:meth:`write_digest`; writes layers)
        self.write_limits = SessionLimits(
            timeout_s=wall,
            progress_steps=max(1, min(1_000, kept // 20)),
            max_vm_steps=kept,
        )
        # the digest the environment takes for a file suite (DatabaseSpec default)
        self.digest_config = DigestConfig()
        self.executed = 0
        self._local = threading.local()  # last_error, per calling thread
        self._cache: dict[str, tuple[tuple | None, str | None]] = {}
        self._pending: dict[str, Future] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def prefetch(self, sqls: Iterable[str]) -> None:
        """Start the statements not yet cached or running on the worker threads (no-op with
        ``workers=1``); :meth:`rows` returns their results when asked."""
        if self.workers < 2:
            return
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="synth-verify")
            for sql in sqls:
                if sql not in self._cache and sql not in self._pending:
                    self._pending[sql] = self._pool.submit(self._run, sql)

    def discard_pending(self) -> None:
        """Cancel prefetched statements that have not started (running ones finish and are
        cached when asked for)."""
        with self._lock:
            for sql, fut in list(self._pending.items()):
                if fut.cancel():
                    del self._pending[sql]

    def close(self) -> None:
        """Stop the worker threads (waits for running statements). Idempotent."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._pending.clear()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def rows(self, sql: str) -> list[tuple] | None:
        """The statement's rows, or ``None`` (error, refusal, timeout, > ``max_rows``).

        Results are cached per statement (the database is read-only here, so a statement's
        answer cannot change; layers re-run the drafts' gold queries).
        """
        with self._lock:
            hit = self._cache.get(sql)
            fut = self._pending.pop(sql, None) if hit is None else None
        if hit is None:
            hit = fut.result() if fut is not None and not fut.cancelled() else self._run(sql)
            with self._lock:
                if len(self._cache) >= 20_000:
                    self._cache.clear()
                self._cache[sql] = hit
        self._local.last_error = hit[1]
        return None if hit[0] is None else list(hit[0])

    def results(self) -> dict[str, tuple[tuple | None, str | None]]:
        """The cached results, ``sql -> (rows or None, error or None)``, for :meth:`remember`
        in another verifier of the same database (e.g. a forked drafting process's)."""
        with self._lock:
            return dict(self._cache)

    def remember(self, results: dict[str, tuple[tuple | None, str | None]]) -> None:
        """Cache ``results`` taken by :meth:`results` of a verifier with the same database and
        limits (a statement's result depends on nothing else, so the answers stay the same)."""
        with self._lock:
            for sql, hit in results.items():
                if len(self._cache) >= 20_000:
                    break
                self._cache.setdefault(sql, hit)

    def _run(self, sql: str) -> tuple[tuple | None, str | None]:
        """``(rows or None, error or None)``; safe to call from any thread."""
        with self._lock:
            self.executed += 1
        try:
            with self.image.session(writable=False, limits=self._limits) as s:
                _mapped(s)
                res = s.execute(sql)
        except Exception as e:  # the sandbox never raises for SQL; this is a last guard
            return None, f"{type(e).__name__}: {e}"
        if not res.ok:
            if res.error_kind == "timeout":  # (the step count or, past it, the wall-clock cap:
                # one message, so nothing recorded says which)
                return None, (
                    f"{_OVER}: over {STEP_SHARE:g} of the episode's budget of "
                    f"{self.step_budget:,} SQLite steps"
                )
            return None, res.error
        if not res.columns and res.is_write:
            return None, "the statement returns no rows"
        if res.truncated or len(res.rows) > self.max_rows:
            return None, f"the answer has more than {self.max_rows} rows"
        return tuple(tuple(r) for r in res.rows), None

    def trusted_rows(self, sql: str) -> list[tuple] | None:
        """Every row of a read the synthesizer makes for itself (not a verdict: no row, byte or
        step cap; ``EXPLAIN`` allowed), on the same kind of connection :meth:`rows` uses, so the
        planner sees the same database; ``None`` on an error. Not cached."""
        try:
            with self.image.session(writable=False, limits=self._limits) as s:
                _mapped(s)
                with s.trusted() as raw:
                    return [tuple(r) for r in raw.execute(sql)]
        except Exception:  # (any SQLite error: the caller falls back to a verdict query)
            return None

    @property
    def max_bytes(self) -> int:
        """The answer size (strings by length, other values 8) above which :meth:`rows` gives
        ``None``."""
        return self._limits.max_bytes

    @property
    def max_value_bytes(self) -> int:
        """SQLite's value-length limit for :meth:`rows`' statements."""
        return self._limits.max_value_bytes

    @property
    def max_steps(self) -> int | None:
        """The SQLite VM steps a statement of :meth:`rows` may take and still be kept."""
        return self._limits.max_vm_steps

    def error(self, sql: str) -> str | None:
        """The database's error message for ``sql`` (``None`` when it runs and passes)."""
        return None if self.rows(sql) is not None else self.last_error

    @property
    def over_budget(self) -> bool:
        """Whether this thread's last :meth:`rows` call failed for the step budget or the
        wall-clock safety cap (not for an error in the statement)."""
        return (self.last_error or "").startswith(_OVER)

    @property
    def last_error(self) -> str | None:
        """The reason this thread's last :meth:`rows` call returned ``None``."""
        return getattr(self._local, "last_error", None)

    def write_digest(self, actions: list[str]) -> str | None:
        """Final-state digest after running ``actions`` in a private writable session."""
        try:
            with self.image.session(writable=True, limits=self.write_limits) as s:
                for a in actions:
                    res = s.execute(a)
                    if not res.ok:
                        self._local.last_error = res.error
                        return None
                return session_state(s, self.digest_config).key()
        except Exception as e:  # last guard, see rows()
            self._local.last_error = f"{type(e).__name__}: {e}"
            return None

    def base_digest(self) -> str:
        """Digest of the untouched database (same configuration as :meth:`write_digest`)."""
        return image_state(self.image, self.digest_config).key()


__all__ = ["Verifier", "is_trivial", "same_answer"]
