"""The per-session SUQL runtime: SQL functions on the session's connection, compiling, counting.

One :class:`SuqlRuntime` per :class:`~clarisql.envs.sandbox.database.Session` (a session extension,
made lazily: before the session's first statement that :func:`may_call` the functions, or when
``session.extensions`` is read; a session that never uses them pays nothing per statement).
It registers ``ANSWER(text_or_texts, question)``, ``SUMMARY(text_or_texts)`` and
``suql_similarity(text, query)`` on the connection, compiles each statement
(:mod:`clarisql.envs.suql.compiler`) before the sandbox runs it, and counts per statement the
ANSWER/SUMMARY evaluations, the model calls (cache misses) and the cache hits. Model calls are
bounded by the statement's time budget (``SessionLimits.timeout_s``): a backend that hangs or
fails turns into an error result for that statement, never an exception out of the session.

``suql_similarity(text, query)`` is the retrieval score the compiler ranks rows by: the best
cosine between any chunk (sentence) of the text and the query or one of its expansions (the
backend's :meth:`expand`, asked once per statement and query, cached; a failed expansion falls
back to the query alone). Before a ranked statement the ranked column's chunks are embedded in
batches with at most half the statement's time budget (loading the embedder model, once per
process, is not counted); rows whose chunks are still not
embedded then score below every embedded row (they are asked last), so a slow embedder costs
calls, never a result or the statement.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from clarisql.envs.sandbox.limits import ConnectionMap
from clarisql.envs.suql import lexicon as L
from clarisql.envs.suql.backends import BackendError, as_texts
from clarisql.envs.suql.compiler import Plan, compile_sql, may_rewrite
from clarisql.envs.suql.embed import Embedder

if TYPE_CHECKING:
    from clarisql.envs.sandbox.database import ExecResult, Session
    from clarisql.envs.suql.config import SuqlConfig


@dataclass
class StatementStats:
    """What one statement cost: evaluations of ANSWER/SUMMARY, model calls, cache hits."""

    evaluations: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    rewritten: bool = False
    steps: list[str] = field(default_factory=list)
    ok: bool = True
    #: model calls spent expanding ANSWER questions for retrieval (cache misses)
    expansion_calls: int = 0


def chunks(value: Any) -> list[str]:
    """The retrieval units of a free-text value: its sentences (as SUQL indexes text chunks)."""
    return [s[:1000] for t in as_texts(value) for s in L.sentences(t)] or [""]


#: the score of a row whose chunks were not embedded in time (below any cosine)
UNRANKED = -2.0


def chunk_similarity(
    emb: Embedder, value: Any, queries: str | Sequence[str], only_cached: bool = False
) -> float:
    """Max cosine similarity between any of ``queries`` and the value's chunks.

    ``only_cached``: return :data:`UNRANKED` instead of embedding chunks not embedded yet.
    """
    texts = chunks(value)
    if only_cached and not emb.has_all(texts):
        return UNRANKED
    qs = [queries] if isinstance(queries, str) else list(queries)
    return float(np.max(emb.embed(texts) @ emb.embed(qs).T))


_INF = float("inf")


class SuqlRuntime:
    """Session extension (see the module docstring)."""

    # defaults shared by all runtimes until a statement sets them (one is made per session)
    _plan: Plan | None = None
    _embed_cut = False

    def __init__(self, session: Session, config: SuqlConfig) -> None:
        self.session = session
        self.config = config
        self.statements: list[StatementStats] = []
        self.current = StatementStats()
        self._deadline = _INF
        self._queries: dict[str, list[str]] = {}
        #: the connection's function slot, bound before this runtime's first statement
        self._slot: list[SuqlRuntime | None] | None = None

    # --- SQL functions ------------------------------------------------------------------------
    def _call(self, kind: str, value: Any, question: str) -> str | None:
        if self.session.running_inline:  # a model call may block: the statement goes elsewhere
            raise apsw.InterruptError(f"{kind.upper()} does not run inline")
        texts = as_texts(value)
        self.current.evaluations += 1
        if time.monotonic() > self._deadline:
            raise BackendError(
                f"{kind.upper()} not evaluated: the statement's time budget "
                f"({self.session.limits.timeout_s:g} s) is spent"
            )
        out, hit = self.config.cached.call(kind, texts, question, self._deadline)
        if hit:
            self.current.cache_hits += 1
        else:
            self.current.model_calls += 1
        return out

    def _answer(self, value: Any, question: Any) -> str | None:
        if value is None or question is None:
            return None
        return self._call("answer", value, str(question))

    def _summary(self, value: Any) -> str | None:
        if value is None:
            return None
        return self._call("summary", value, "")

    def _similarity(self, value: Any, query: Any) -> float:
        if self.session.running_inline:  # embedding (or loading the model) may block
            raise apsw.InterruptError("suql_similarity does not run inline")
        emb = self.config.embedder()
        if emb is None or value is None or query is None:
            return 0.0
        return chunk_similarity(emb, value, self._expanded(str(query)), self._embed_cut)

    def _expanded(self, query: str) -> list[str]:
        """The query and its expansions (asked once per statement and query)."""
        if query not in self._queries:
            extra: list[str] = []
            if self.config.expand:
                try:
                    out, hit = self.config.cached.call("expand", [], query, self._deadline)
                    self.current.expansion_calls += not hit
                    extra = [x for x in out.splitlines() if x.strip()]
                except BackendError:  # ranking only: fall back to the question alone
                    pass
            self._queries[query] = [query, *extra]
        return self._queries[query]

    # --- session hooks ---------------------------------------------------------------------------
    def inline_ok(self, sql: Any) -> bool:
        """Whether ``sql`` may run inline (:meth:`Session.execute_inline`): not when it names
        ANSWER, SUMMARY or suql_similarity (they call models)."""
        return not may_call(sql)

    def before(self, sql: Any) -> Any:
        if self._slot is None or self._slot[0] is not self:
            self._slot = _bind(self.session.connection, self)
        cur = self.current
        if cur.evaluations or cur.rewritten or cur.steps or not cur.ok:
            self.current = StatementStats()  # the last one may be kept in self.statements
        self._deadline = time.monotonic() + self.session.limits.timeout_s
        if self._queries:
            self._queries = {}
        self._embed_cut = False
        if not self.config.optimize or not may_rewrite(sql):
            self._plan = None
            return sql
        try:
            ranked = self.config.embedder_name != "none"
            plan = compile_sql(sql, self.config.k if ranked else 0, rank=ranked)
        except Exception:  # the compiler must never break a statement: run it as written
            return sql
        self._plan = plan
        if plan.rewritten:  # (a fresh or untouched StatementStats holds False and [] already)
            self.current.rewritten, self.current.steps = True, list(plan.steps)
        if any(x == "ranked" or x.startswith("prefilter") for x in plan.steps):
            try:  # loading the embedder (once per process) is not the statement's time
                self.config.embedder()
            except Exception:  # reported by suql_similarity in the statement
                pass
            self._deadline = time.monotonic() + self.session.limits.timeout_s
        if plan.prefilter_columns:
            try:
                self._prewarm(plan.prefilter_columns)
            except Exception:  # a broken embedder: suql_similarity reports it in the statement
                pass
        return plan.sql

    def _prewarm(self, columns: list[tuple[str, str]]) -> None:
        """Embed a ranked column's chunks in batches (plain column names only) with at most half
        of the statement's time budget; if that runs out, rows not embedded rank last."""
        emb = self.config.embedder()
        if emb is None:
            return
        stop = time.monotonic() + (self._deadline - time.monotonic()) / 2
        for table, column in columns:
            q = f'SELECT DISTINCT "{column.replace(chr(34), "")}" FROM "{table.replace(chr(34), "")}"'
            try:
                with self.session.trusted() as conn:
                    values = [r[0] for r in conn.execute(q)]
            except Exception:
                continue
            todo = list(dict.fromkeys(c for v in values if v is not None for c in chunks(v)))
            todo = [c for c in todo if not emb.has_all([c])]
            for i in range(0, len(todo), 256):  # within half the statement's budget only
                if time.monotonic() > stop:
                    self._embed_cut = True
                    return
                emb.embed(todo[i : i + 256])

    def after(self, res: ExecResult) -> None:
        self.current.ok = res.ok
        if self.current.evaluations or self.current.rewritten:
            self.statements.append(self.current)
        self._deadline = _INF

    def close(self) -> None:
        self._deadline = -_INF
        if self._slot is not None and self._slot[0] is self:
            self._slot[0] = None

    # --- reporting -------------------------------------------------------------------------------
    def episode_stats(self) -> dict[str, Any]:
        """Totals over the session's statements that used ANSWER/SUMMARY (JSON-serialisable)."""
        used = [s for s in self.statements if s.evaluations]
        ev = sum(s.evaluations for s in used)
        hits = sum(s.cache_hits for s in used)
        return {
            "backend": self.config.cached.key,
            "queries": len(used),
            "evaluations": ev,
            "model_calls": sum(s.model_calls for s in used),
            "cache_hits": hits,
            "expansion_calls": sum(s.expansion_calls for s in self.statements),
            "per_query": [asdict(s) for s in used],
        }


#: connection -> [the runtime its SQL functions call now] (weak: closed connections drop out)
_SLOTS = ConnectionMap()


def may_call(sql: object) -> bool:
    """Whether ``sql`` (text or UTF-8 bytes) may call ANSWER, SUMMARY or suql_similarity.

    SQLite names a function only by spelling it (quoted or not, ASCII case-insensitively), and
    views or triggers of the image cannot call these functions (``trusted_schema`` is off), so a
    statement that does not spell one of the names cannot reach a runtime that does not exist yet
    (a temporary view made in the session spelled it when it was made).
    """
    if isinstance(sql, str):
        low = sql.lower()
        return "answer" in low or "summary" in low or "suql_similarity" in low
    if isinstance(sql, (bytes, bytearray)):
        low_b = bytes(sql).lower()
        return b"answer" in low_b or b"summary" in low_b or b"suql_similarity" in low_b
    return False


def _bind(conn: Any, runtime: SuqlRuntime | None) -> list[SuqlRuntime | None]:
    """Point ``conn``'s ANSWER/SUMMARY/suql_similarity at ``runtime``; returns the slot.

    A pooled connection serves many sessions: the functions are registered on it once and call
    whichever runtime is bound now (registering three functions per session cost ~2 µs, a
    tenth of opening one). Outside a session they answer NULL / 0.
    """
    slot = _SLOTS.get(conn)
    if slot is None:
        slot = _SLOTS[conn] = [runtime]

        def answer(value: Any, question: Any) -> str | None:
            rt = slot[0]
            return None if rt is None else rt._answer(value, question)

        def summary(value: Any) -> str | None:
            rt = slot[0]
            return None if rt is None else rt._summary(value)

        def similarity(value: Any, query: Any) -> float:
            rt = slot[0]
            return 0.0 if rt is None else rt._similarity(value, query)

        conn.create_scalar_function("answer", answer, 2, deterministic=True)
        conn.create_scalar_function("summary", summary, 1, deterministic=True)
        conn.create_scalar_function("suql_similarity", similarity, 2, deterministic=True)
    slot[0] = runtime
    return slot


__all__ = ["StatementStats", "SuqlRuntime", "may_call"]
