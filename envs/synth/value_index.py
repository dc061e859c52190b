"""A column's distinct values, read once, answering :func:`~clarisql.envs.explorers.reach_sql`
from memory.

Contract
- :meth:`ValueIndex.reach` returns exactly what ``verifier.rows(reach_sql(table, column,
  surface))`` returns: the same values, in the same order, and ``None`` where that statement
  would give ``None`` (more than the verifier's ``max_rows`` rows or ``max_bytes``, or over its
  step budget). Synthesis output therefore does not change; only the work does (one scan per
  column instead of one per surface).
- How: one trusted read of ``SELECT DISTINCT column FROM table WHERE column IS NOT NULL`` gives
  every value in the order SQLite's scan meets it. The reach query runs the same scan (its
  ``LIKE`` and ``length()`` terms cannot use an index; :meth:`ValueIndex.build` checks that both
  plans are the same), and ``SELECT DISTINCT`` emits a value where the scan first meets it, so
  its rows are this list filtered by the query's terms (:func:`~clarisql.envs.explorers.
  reach_terms`), evaluated as SQLite does: ``LIKE '%x%' ESCAPE '\\'`` is a substring test with
  ASCII letters case-folded (and nothing else folded), ``length()`` counts characters, and an
  integer is matched through its decimal text.
- Lookups: the values' folded texts joined into one string, searched with ``str.find`` for the
  longest word (the other words checked on each hit), and a bucket per text length for the
  near-length terms; a lookup stops as soon as more than ``max_rows`` values are reached.
- Step budget: the reach statement executes at most (rows scanned + 2) x (its program's
  length) VM steps (one pass over the loop body per row). Where that bound could exceed the
  verifier's budget, :meth:`ValueIndex.reach` answers :data:`ASK_SQL` and the caller runs the
  statement, so the step verdict is never guessed.
- :meth:`ValueIndexes.window` answers a ``SELECT DISTINCT ... ORDER BY 1 LIMIT n OFFSET k``
  window (the clarify layer's sample of a name column) from one sorted read of all the
  statement's rows, with the same caps and the same step rule.
- Declines (:meth:`ValueIndex.build` returns ``None``; the caller runs the SQL) for columns
  holding floats or blobs (SQLite's text form of a float is not Python's), texts with a NUL
  character (``length()`` stops there) or longer than the verifier's value limit, and when the
  plans differ.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from clarisql.envs.explorers import reach_sql, reach_terms

if TYPE_CHECKING:
    from clarisql.envs.synth.verify import Verifier

#: Returned by :meth:`ValueIndex.reach` when only running the statement can tell its verdict.
ASK_SQL = object()

_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_SEP = "\x00"
#: Surfaces longer than this are left to SQL (far below SQLite's LIKE pattern length limit).
_LONGEST = 1000


def fold(text: str) -> str:
    """``text`` with ASCII letters lower-cased (what SQLite's ``LIKE`` folds), nothing else."""
    return text.translate(_FOLD)


def _plan(verifier: Verifier, sql: str) -> list[str] | None:
    got = verifier.trusted_rows(f"EXPLAIN QUERY PLAN {sql}")
    return None if got is None else [str(r[-1]) for r in got]


def _program(verifier: Verifier, sql: str) -> int | None:
    got = verifier.trusted_rows(f"EXPLAIN {sql}")
    return None if got is None else len(got)


class ValueIndex:
    """The distinct values of one column (see the module docstring)."""

    def __init__(
        self,
        values: list[Any],
        texts: list[str],
        scanned: int,
        program: tuple[int, int],
        max_rows: int,
        max_bytes: int,
        max_steps: int | None,
    ):
        self.values = values
        self.texts = texts
        self.folded = [fold(t) for t in texts]
        self.lengths = [len(t) for t in texts]
        self.scanned = scanned
        self.program = program  # (length for one word, extra length per further word)
        self.max_rows, self.max_bytes, self.max_steps = max_rows, max_bytes, max_steps
        self.all = _Texts(self.folded, range(len(texts)))
        by_length: dict[int, list[int]] = {}
        for i, n in enumerate(self.lengths):
            by_length.setdefault(n, []).append(i)
        self.by_length = {
            n: _Texts([self.folded[i] for i in at], at) for n, at in by_length.items()
        }

    @classmethod
    def build(cls, verifier: Verifier, table_sql: str, column_sql: str) -> ValueIndex | None:
        """Read the column once; ``None`` where the index declines (module docstring)."""
        base = f"SELECT DISTINCT {column_sql} FROM {table_sql} WHERE {column_sql} IS NOT NULL"
        one, two = (reach_sql(table_sql, column_sql, s) for s in ("abcdefgh", "abcd efgh"))
        plan = _plan(verifier, base)
        if plan is None or plan != _plan(verifier, one) or plan != _plan(verifier, two):
            return None
        p1, p2 = _program(verifier, one), _program(verifier, two)
        count = verifier.trusted_rows(f"SELECT COUNT(*) FROM {table_sql}")
        got = verifier.trusted_rows(base)
        if got is None or count is None or p1 is None or p2 is None:
            return None
        limit = verifier.max_value_bytes
        values, texts = [], []
        for (v,) in got:
            if isinstance(v, str):
                if _SEP in v or (len(v) * 8 > limit and len(v.encode()) * 2 > limit):
                    return None
                texts.append(v)
            elif isinstance(v, int):
                texts.append(str(v))
            else:  # a float's or blob's text form is SQLite's own: let SQLite answer
                return None
            values.append(v)
        return cls(
            values,
            texts,
            int(count[0][0]),
            (p1, max(0, p2 - p1)),
            verifier.max_rows,
            verifier.max_bytes,
            verifier.max_steps,
        )

    def reach(self, surface: str) -> list[tuple] | None | object:
        """The rows ``verifier.rows(reach_sql(table, column, surface))`` returns, or
        :data:`ASK_SQL` when the step budget might decide (module docstring)."""
        if _SEP in surface or len(surface) > _LONGEST:  # (SQLite's LIKE pattern limit)
            return ASK_SQL
        words, lo, hi, pieces = reach_terms(surface)
        if self.max_steps is not None:
            program = self.program[0] + self.program[1] * (len(words) - 1)
            if (self.scanned + 2) * program > self.max_steps:
                return ASK_SQL
        words = [fold(w) for w in words]
        parts = None if pieces is None else [fold(p) for p in pieces]
        hit: set[int] = set()
        over = self.max_rows
        for n in range(lo, hi + 1):
            bucket = self.by_length.get(n)
            if bucket is None:
                continue
            for found in [bucket.positions] if parts is None else map(bucket.holding, parts):
                for i in found:
                    hit.add(i)
                    if len(hit) > over:
                        return None
        first = max(words, key=len)
        rest = [w for w in words if w is not first]
        for i in self.all.holding(first):
            if i not in hit and all(w in self.folded[i] for w in rest):
                hit.add(i)
                if len(hit) > over:
                    return None
        order = sorted(hit)
        size = 0
        for i in order:
            v = self.values[i]
            size += len(v) if isinstance(v, str) else 8
        if size > self.max_bytes:
            return None
        return [(self.values[i],) for i in order]


class _Texts:
    """Folded texts joined into one string (``str.find`` runs in C) and their positions."""

    def __init__(self, folded: list[str], positions: Sequence[int]):
        self.positions = list(positions)
        self.joined = _SEP.join(folded)
        self.starts: list[int] = []
        at = 0
        for f in folded:
            self.starts.append(at)
            at += len(f) + 1

    def holding(self, word: str) -> Iterator[int]:
        """The positions of the texts that hold ``word``, ascending."""
        find, starts, n = self.joined.find, self.starts, len(self.starts)
        at = find(word) if n else -1
        while at >= 0:
            k = bisect.bisect_right(starts, at) - 1
            yield self.positions[k]
            if k + 1 >= n:
                return
            at = find(word, starts[k + 1])


class ValueIndexes:
    """The :class:`ValueIndex` of each (table, column) a generator asks about, built on first
    use (``None`` kept for a declined column). Thread-safe."""

    def __init__(self, verifier: Verifier):
        self.verifier = verifier
        self._built: dict[tuple[str, str], ValueIndex | None] = {}
        self._sorted: dict[str, tuple[list[tuple], int] | None] = {}
        self._lock = threading.Lock()

    def reach(self, table_sql: str, column_sql: str, surface: str) -> list[tuple] | None:
        """``verifier.rows(reach_sql(table_sql, column_sql, surface))``, from the index where
        it can answer."""
        key = (table_sql, column_sql)
        with self._lock:
            if key not in self._built:
                self._built[key] = ValueIndex.build(self.verifier, table_sql, column_sql)
            idx = self._built[key]
        got = ASK_SQL if idx is None else idx.reach(surface)
        if got is ASK_SQL:
            return self.verifier.rows(reach_sql(table_sql, column_sql, surface))
        return got  # type: ignore[return-value]

    def window(
        self, table_sql: str, distinct_sql: str, size: int, offset: int
    ) -> list[tuple] | None:
        """``verifier.rows(f"{distinct_sql} ORDER BY 1 LIMIT {size} OFFSET {offset}")`` for a
        ``SELECT DISTINCT x FROM table_sql WHERE ...`` statement, sliced from one sorted read
        of all its rows. ``ORDER BY 1`` over distinct values is a total order (values that
        compare equal are one distinct value), so every slice is the statement's answer; the
        row and byte caps are applied as the verifier applies them, and where the step bound
        (rows scanned + rows sorted + 2) x (program length) could exceed the budget, or a
        value is longer than the verifier's limit, the statement itself runs."""
        sql = f"{distinct_sql} ORDER BY 1 LIMIT {size} OFFSET {offset}"
        v = self.verifier
        with self._lock:
            if distinct_sql not in self._sorted:
                self._sorted[distinct_sql] = self._read_sorted(table_sql, distinct_sql, sql)
            got = self._sorted[distinct_sql]
        if got is None or size > v.max_rows:
            return v.rows(sql)
        rows, steps = got
        if v.max_steps is not None and steps > v.max_steps:
            return v.rows(sql)
        out = rows[offset : offset + size]
        size_b = sum(len(x) if isinstance(x, (str, bytes)) else 8 for r in out for x in r)
        return None if size_b > v.max_bytes else out

    def _read_sorted(
        self, table_sql: str, distinct_sql: str, sql: str
    ) -> tuple[list[tuple], int] | None:
        v = self.verifier
        program = _program(v, sql)
        count = v.trusted_rows(f"SELECT COUNT(*) FROM {table_sql}")
        rows = v.trusted_rows(f"{distinct_sql} ORDER BY 1")
        if program is None or count is None or rows is None:
            return None
        limit = v.max_value_bytes
        for r in rows:
            for x in r:
                if isinstance(x, (str, bytes)) and len(x) * 8 > limit:
                    n = len(x.encode()) if isinstance(x, str) else len(x)
                    if n * 2 > limit:
                        return None
        return rows, (int(count[0][0]) + len(rows) + 2) * program


__all__ = ["ASK_SQL", "ValueIndex", "ValueIndexes", "fold"]
