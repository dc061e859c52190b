"""Explorers: the ways an agent that never asks could pick a reading from the data.

A clarification task is worth asking only if exploring cannot settle it. When a suite is built,
every unclear part (a misspelled or cut-off value, an abbreviated name, a value with no match,
a missing scope) has a *surface* (what the user wrote; ``None`` when nothing was written) and
*candidates* (the readings the data allows, each with where it first occurs and how often). Each
explorer ranks some candidates first (its *top set*: one candidate is a pick, several a tie it
cannot break):

- ``nearest``: the unique candidate at the smallest edit distance from the surface (Levenshtein,
  case-folded);
- ``prefix``: the unique candidate that starts with the surface, else the unique one sharing the
  longest common prefix with it;
- ``trigram``: the unique candidate most similar in character trigrams (a cheap, offline
  string embedding; the packaged sentence embedder is not used here: it would make a suite build
  depend on an optional model);
- ``first-row``: the candidate of the first matching row by rowid (storage order);
- ``most-frequent``: the unique candidate with the most rows.

Contract: :func:`unrankable` returns the candidates that *no* explorer separates from the gold
(the gold included): a candidate stays only if, for every explorer, it falls on the same side
of that explorer's top set as the gold (both in it or both outside it; "take the runner-up" is
an explorer too when only two readings exist). :func:`ambiguous` is true
when at least two readings remain. A task is kept as a clarification task only when it is
ambiguous in this sense; otherwise exploring solves it and it teaches nothing. Pure functions, no
randomness, no I/O (:func:`value_stats` runs one read through a caller's ``rows`` function).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: The explorers tried, in the order they are reported.
EXPLORERS = ("nearest", "prefix", "trigram", "first-row", "most-frequent")


@dataclass(frozen=True)
class Candidate:
    """One reading: its ``value``, the rowid (or any storage-order key) of its first row, and
    its row count (``None`` where the data has no such notion: the explorer cannot use it)."""

    value: Any
    first_row: int | None = None
    count: int | None = None


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute; one each), O(len(a) * len(b))."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _trigrams(s: str) -> set[str]:
    s = f"  {s.casefold()} "
    return {s[i : i + 3] for i in range(len(s) - 2)}


def _top(cands: Sequence[Candidate], score: Callable[[Candidate], Any]) -> list[Any] | None:
    """The values of the candidates at the highest score (``None``: no candidate has a score)."""
    scored = [(score(c), c) for c in cands]
    scored = [(s, c) for s, c in scored if s is not None]
    if not scored:
        return None
    top = max(s for s, _ in scored)
    return [c.value for s, c in scored if s == top]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def tops(surface: str | None, cands: Sequence[Candidate]) -> dict[str, list[Any] | None]:
    """Each explorer's top set among ``cands``: the candidates it ranks first (one: a pick;
    several: a tie it cannot break; ``None``: it has nothing to go on)."""
    out: dict[str, list[Any] | None] = dict.fromkeys(EXPLORERS)
    if surface is not None and str(surface).strip():
        s = str(surface).casefold()

        def text(c: Candidate) -> str:
            return str(c.value).casefold()

        out["nearest"] = _top(cands, lambda c: -levenshtein(s, text(c)))
        starts = [c.value for c in cands if text(c).startswith(s)]
        out["prefix"] = starts or _top(cands, lambda c: _common_prefix(s, text(c)) or None)
        tri = _trigrams(s)

        def sim(c: Candidate) -> float:
            t = _trigrams(text(c))
            return round(len(tri & t) / max(1, len(tri | t)), 6)

        out["trigram"] = _top(cands, sim)
    out["first-row"] = _top(cands, lambda c: None if c.first_row is None else -c.first_row)
    out["most-frequent"] = _top(cands, lambda c: c.count or None)
    return out


def choices(surface: str | None, cands: Sequence[Candidate]) -> dict[str, Any]:
    """Each explorer's pick (the unique top candidate), ``None`` where it cannot decide."""
    return {k: (t[0] if t and len(t) == 1 else None) for k, t in tops(surface, cands).items()}


def unrankable(surface: str | None, cands: Sequence[Candidate], gold: Any) -> list[Any]:
    """The candidates' values that no explorer separates from ``gold`` (``gold`` first; empty
    when ``gold`` is not a candidate): for every explorer, each lies on the gold's side of that
    explorer's top set (both in it, or both outside it)."""
    if not any(c.value == gold for c in cands):
        return []
    ts = [t for t in tops(surface, cands).values() if t is not None]
    keep = [gold]
    for c in cands:
        if c.value != gold and all((gold in t) == (c.value in t) for t in ts):
            keep.append(c.value)
    return keep


def ambiguous(surface: str | None, cands: Sequence[Candidate], gold: Any) -> bool:
    """True when >= 2 readings (the gold and another) are left that no explorer can rank."""
    return len(unrankable(surface, cands, gold)) >= 2


def resolved_by(surface: str | None, cands: Sequence[Candidate], gold: Any) -> list[str]:
    """The explorers whose pick is the gold (for reports)."""
    return [k for k, p in choices(surface, cands).items() if p is not None and p == gold]


def value_stats(
    rows: Callable[[str], list[tuple] | None],
    table_sql: str,
    column_sql: str,
    values: Sequence[Any],
    where: str = "",
) -> list[Candidate]:
    """Candidates for ``values`` of one column, with their first rowid and row count, read with
    one query through ``rows`` (the caller's sandboxed reader; quoted names are the caller's)."""
    if not values:
        return []
    lits = ", ".join(_lit(v) for v in values)
    w = f" AND ({where})" if where else ""
    got = rows(
        f"SELECT {column_sql}, MIN(rowid), COUNT(*) FROM {table_sql} "
        f"WHERE {column_sql} IN ({lits}){w} GROUP BY {column_sql}"
    )
    stats = {r[0]: (r[1], r[2]) for r in got or []}
    return [Candidate(v, *stats.get(v, (None, 0))) for v in values]


def _lit(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


__all__ = [
    "EXPLORERS",
    "Candidate",
    "ambiguous",
    "choices",
    "tops",
    "levenshtein",
    "resolved_by",
    "unrankable",
    "value_stats",
]
