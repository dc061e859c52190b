"""Explorers: the ways an agent that never asks could pick a reading, and the rule that makes
every one of them no better than a guess.

Every unclear part of a clarification task (a misspelled or cut-off value, an abbreviated name, a
value with no match, a missing scope) has a *surface* (what the user wrote; ``None`` when nothing
was written) and *candidates*: every value an agent could find for it (all distinct values of the
column, a city's districts, the tables of a family), each with where it first occurs and how
often. An *explorer* is any rule that picks a candidate from what the agent can see. Two kinds:

- **Surface explorers** read what the user wrote, so they carry information about what was meant
  (:data:`SURFACE_EXPLORERS`): ``nearest`` (smallest edit distance, Levenshtein, case-folded),
  ``prefix`` (the candidates that start with the surface, else the longest common prefix) and
  ``trigram`` (character-trigram Jaccard similarity: a cheap, offline stand-in for an embedding;
  the packaged sentence embedder would make a suite build depend on an optional model).
- **Rank explorers** know nothing about intent: storage order (first row by rowid, the k-th, the
  last), frequency (most frequent, the k-th, the rarest), value order (first, last, k-th either
  way: "the second-latest year"), length, "the runner-up by edit distance", "anything but the
  nearest" (:data:`EXPLORERS` lists the five the reports name; :func:`rank_picks` the family).

Why not simply drop every task whose gold some explorer picks (the earlier rule)? Because that
filter is itself a signal: if the gold is never the first row, never the most frequent value,
never the latest year, the complementary rule ("the second-latest year", "the runner-up", "any
but the nearest") wins far above chance. On the built-in suite "take the second-latest year" was
right on 14 of 18 Missing-year tasks without asking. Selection on the gold cannot remove an
explorer's information; it only moves it to another explorer.

The rule instead:

1. :func:`readings` is a function of what the agent sees only (the surface and the candidates'
   values), never of the gold:

   - nothing written (a Missing scope): every candidate;
   - candidates that *contain* what was written (they start with it, or hold its words in order:
     a cut-off or a left-out word; a CJK character counts as a word, as in ODUTQA's abbreviations):
     all of them, or, where only some hold it in the letter case it was written in, those (a
     case-sensitive lookup finds "Rime Of The" in "Rime Of The Ancient Mariner" and not in
     "Rime of the Ancient Mariner"). Edit distance and trigrams between a cut-off and its
     completions measure only how much was left out, which says nothing about which one was
     meant;
   - otherwise candidates within a typo's reach (:data:`TYPO_EDITS`): the ones every surface
     explorer ranks first (the nearest ones where they disagree). A misspelling with one nearest
     value has one reading: it is not a clarification task;
   - otherwise, for a name the data lacks (a word swapped for another value's, two names'
     halves joined: "Toroblin"), the candidates it could be made from (:func:`made_from`: they
     share a whole word of >= 4 letters with it, or, for a one-word surface, a word of theirs
     starts with its first 4 letters or ends with its last 4): no user who writes "Toroblin"
     means Amsterdam;
   - otherwise (a year outside the data, a name that shares nothing) nothing written fits:
     every candidate.

   The *literal reading* (what the words say taken at face value: the latest year, the nearest
   year, the first district) is a rank explorer the suite's baseline uses; it is removed from
   the readings (the caller passes it), so it is right on no task, and the rule that removes it is
   itself visible to the agent.
2. A part is a clarification part only when >= 2 readings are left and they give different
   answers.
3. The gold is drawn **uniformly** among the readings (:func:`draw`). Checks a suite applies to
   the gold (a non-trivial answer, a row in the literal table...) are applied by rejection: the
   first reading of a uniformly shuffled list that passes is uniform over the readings that pass.

4. Readings that give the same answer are one choice to an agent that answers without asking:
   it can run every reading and answer with the commonest result (:func:`answer_picks`:
   ``answer-mode``; or the median, the largest, the smallest). So the gold is uniform over the
   readings' *distinct answers* (under the environment's own comparison), then over the
   readings that give the gold's answer (:func:`answer_groups`; a generator that draws a reading
   uniformly keeps it with probability ``smallest group / its group``, which is that law).

Consequence: the readings are known to the agent, the gold is uniform over them, and the data's
storage order, frequencies and values are fixed before the gold is drawn (or, for ODUTQA, stored
in an order keyed on each row's own values), so every explorer, surface or rank, is right on at
most 1/|readings| of the parts in expectation: a guess. ``benchmarks/explorer_audit.py`` measures
each one's hit rate against that chance rate (and is tested on a planted bias); where the
readings can be run, an explorer is right when its reading's answer is the gold's, and chance is
1/|distinct answers|.

Pure functions, no I/O (:func:`value_stats` runs one read through a caller's ``rows`` function);
randomness only through the caller's ``random.Random``.
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance.Levenshtein import distance as _lev_distance

#: The explorers the reports name, in order (surface explorers, then two rank explorers).
EXPLORERS = ("nearest", "prefix", "trigram", "first-row", "most-frequent")
#: The explorers that read what the user wrote (they decide the readings).
SURFACE_EXPLORERS = ("nearest", "prefix", "trigram")
#: Edits a misspelling may be from a value it stands for (one for surfaces under 4 characters).
TYPO_EDITS = 2

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


@dataclass(frozen=True)
class Candidate:
    """One reading: its ``value``, the rowid (or any storage-order key) of its first row, and
    its row count (``None`` where the data has no such notion: the explorer cannot use it)."""

    value: Any
    first_row: int | None = None
    count: int | None = None


def levenshtein(a: str, b: str, bound: int | None = None) -> int:
    """Edit distance (insert, delete, substitute; one each). With ``bound``, any distance above
    it is returned as ``bound + 1``. Computed by ``rapidfuzz`` (C, bit-parallel: a library made
    for the job; the same numbers as the textbook dynamic program, property-tested against it
    in ``tests/test_explorers_speed.py``)."""
    return _lev_distance(a, b, score_cutoff=bound)


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


#: a suite asks the same column's values again and again (every surface against every value):
#: their case-folded text and words are computed once (bounded caches, pure functions)
_fold = functools.lru_cache(maxsize=1 << 18)(str.casefold)


@functools.lru_cache(maxsize=1 << 18)
def _words(folded: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(folded))


def tokens(text: str) -> list[str]:
    """Case-folded words of ``text`` (each CJK character one word)."""
    return list(_words(_fold(text)))


def contains(surface: str, value: Any) -> bool:
    """True when ``value`` could be what ``surface`` cuts short: it starts with the surface, or
    holds the surface's words in the same order (a left-out word), case-folded."""
    s, v = _fold(surface).strip(), _fold(value if isinstance(value, str) else str(value))
    if not s or s == v:
        return False
    if v.startswith(s):
        return True
    want = _words(s)
    if not want:
        return False
    have = iter(_words(v))
    return all(w in have for w in want)


def containing(surface: str, values: Sequence[Any]) -> list[Any]:
    """The values of ``values`` that :func:`contains` ``surface`` (in their order): the same
    test, the surface's side worked out once for a whole column."""
    s = _fold(surface).strip()
    if not s:
        return []
    want = _words(s)
    # (a value holding the surface's words holds its first word as a substring: the cheap
    # test first, the word-by-word one only where it passes)
    first = want[0] if want else None
    out = []
    for value in values:
        v = _fold(value if isinstance(value, str) else str(value))
        if s == v:
            continue
        if v.startswith(s):
            out.append(value)
        elif first is not None and first in v:
            have = iter(_words(v))
            if all(w in have for w in want):
                out.append(value)
    return out


def typo_bound(surface: str) -> int:
    """The edits a misspelling of a value may be from it (:data:`TYPO_EDITS`, one when short)."""
    return TYPO_EDITS if len(surface.strip()) >= 4 else 1


def tops(surface: str | None, cands: Sequence[Candidate]) -> dict[str, list[Any] | None]:
    """Each explorer of :data:`EXPLORERS`' top set among ``cands``: the candidates it ranks first
    (one: a pick; several: a tie it cannot break; ``None``: it has nothing to go on)."""
    out: dict[str, list[Any] | None] = dict.fromkeys(EXPLORERS)
    if surface is not None and str(surface).strip():
        out.update(_surface_tops(str(surface), cands))
    out["first-row"] = _top(cands, lambda c: None if c.first_row is None else -c.first_row)
    out["most-frequent"] = _top(cands, lambda c: c.count or None)
    return out


def _surface_tops(surface: str, cands: Sequence[Candidate]) -> dict[str, list[Any] | None]:
    s = surface.casefold()

    def text(c: Candidate) -> str:
        return str(c.value).casefold()

    starts = [c.value for c in cands if text(c).startswith(s)]
    tri = _trigrams(s)

    def sim(c: Candidate) -> float:
        t = _trigrams(text(c))
        return round(len(tri & t) / max(1, len(tri | t)), 6)

    return {
        "nearest": _top(cands, lambda c: -levenshtein(s, text(c))),
        "prefix": starts or _top(cands, lambda c: _common_prefix(s, text(c)) or None),
        "trigram": _top(cands, sim),
    }


def choices(surface: str | None, cands: Sequence[Candidate]) -> dict[str, Any]:
    """Each explorer's pick (the unique top candidate), ``None`` where it cannot decide."""
    return {k: (t[0] if t and len(t) == 1 else None) for k, t in tops(surface, cands).items()}


def _values(cands: Sequence[Any]) -> list[Any]:
    return [c.value if isinstance(c, Candidate) else c for c in cands]


def fitting(surface: str, cands: Sequence[Any]) -> list[Any] | None:
    """The values of ``cands`` that ``surface`` fits (contains it, else the surface explorers'
    joint top set within a typo's reach), in their order; ``None`` when nothing fits."""
    vals = _values(cands)
    surface = surface.strip()
    fit = containing(surface, vals)
    if fit:
        # a case-sensitive lookup (GLOB, instr, =) finds the values holding the surface in its
        # own letter case first: where only some do, those are the readings
        same = [v for v in fit if surface in str(v)]
        return one_per_fold(surface, same if same and len(same) < len(fit) else fit)
    bound = typo_bound(surface)
    s = surface.casefold()
    near = [v for v in vals if levenshtein(s, str(v).casefold(), bound) <= bound]
    if not near:
        return None
    tops_ = _surface_tops(surface, [Candidate(v) for v in near])
    ts = [t for t in tops_.values() if t]
    # where the explorers disagree, edit distance decides (a shared first letter or trigram
    # is weaker evidence than fewer edits)
    top = [v for v in near if all(v in t for t in ts)] or list(tops_["nearest"] or near)
    return one_per_fold(surface, top)


def _accentless(value: Any) -> str:
    text = unicodedata.normalize("NFKD", str(value).casefold())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def one_per_fold(surface: str, vals: Sequence[Any]) -> list[Any]:
    """``vals`` with the values that differ from another only in letter case or accents
    ("Luis" / "Luís", "Rime Of The ..." / "Rime of the ...") narrowed to those nearest to
    ``surface`` as written (case- and accent-sensitive edit distance): a case-sensitive match
    ranks them, so they are no choice left to a question."""
    groups: dict[str, list[int]] = {}
    for i, v in enumerate(vals):
        groups.setdefault(_accentless(v), []).append(i)
    keep: set[int] = set()
    if len(groups) == len(vals):
        return list(vals)  # (no two values alike but for capitals or accents: the usual case)
    for group in groups.values():
        if len(group) == 1:
            keep.add(group[0])
            continue
        dist = [levenshtein(surface, str(vals[i])) for i in group]
        keep |= {i for i, d in zip(group, dist, strict=True) if d == min(dist)}
    return [v for i, v in enumerate(vals) if i in keep]


#: The letters a made-up name keeps of a value it was made from (a whole word, a head, a tail).
HALF = 4


def made_from(surface: str, value: Any) -> bool:
    """True when ``value`` could be one a made-up ``surface`` was made from: they share a whole
    word of >= :data:`HALF` letters ("Fort Dijon": the values holding Fort or Dijon), or, for a
    one-word surface, a word of ``value`` starts with its first :data:`HALF` letters or ends
    with its last :data:`HALF` ("Toroblin": Toronto, Dublin), case-folded."""
    words = tokens(surface)
    have = tokens(str(value))
    long = [w for w in words if len(w) >= HALF and w.isalpha()]
    if any(w in have for w in long):
        return True
    if len(words) != 1 or not long:
        return False
    w = long[0]
    return any(x.startswith(w[:HALF]) or x.endswith(w[-HALF:]) for x in have if len(x) >= HALF)


def related(surface: str, cands: Sequence[Any]) -> list[Any]:
    """The values of ``cands`` that ``surface`` could be made from (:func:`made_from`)."""
    return [v for v in _values(cands) if made_from(surface, v)]


def readings(
    surface: str | None, cands: Sequence[Any], literal: Any = None, made_up: bool = True
) -> list[Any]:
    """The readings of an unclear part, from what an agent sees only (module docstring, rule 1):
    values of ``cands`` (:class:`Candidate` or plain values), in their order, ``literal`` left
    out. A surface nothing fits reads as the values it could be made up from (:func:`related`,
    the synthesized suites' rule; ``made_up=False``: as every value, the built-in suite's)."""
    vals = _values(cands)
    if surface is not None and str(surface).strip():
        fit = fitting(str(surface), vals)
        if fit is None and made_up:
            fit = related(str(surface), vals)
        vals = fit or vals
    return [v for v in vals if not (literal is not None and v == literal)]


def draw(rng: random.Random, values: Sequence[Any]) -> list[Any]:
    """``values`` in a uniformly random order: take the first that passes the suite's checks
    (uniform over those that pass: module docstring, rule 3)."""
    out = list(values)
    rng.shuffle(out)
    return out


def ambiguous(surface: str | None, cands: Sequence[Any], gold: Any, literal: Any = None) -> bool:
    """True when the gold is one of >= 2 readings (:func:`readings`)."""
    r = readings(surface, cands, literal)
    return gold in r and len(r) >= 2


def resolved_by(surface: str | None, cands: Sequence[Candidate], gold: Any) -> list[str]:
    """The explorers of :data:`EXPLORERS` whose pick is the gold (for reports)."""
    return [k for k, p in choices(surface, cands).items() if p is not None and p == gold]


def _order_key(v: Any) -> tuple:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, v, "")
    s = str(v)
    try:
        return (0, float(s), "")
    except ValueError:
        return (1, 0, s.casefold())


#: How deep the k-th rank explorers go (first, second, third).
RANK_DEPTH = 3


def rank_picks(
    surface: str | None, cands: Sequence[Candidate], reads: Sequence[Any]
) -> dict[str, Any]:
    """Each rank explorer's pick among the readings ``reads`` (``None`` where it cannot pick):
    k-th by value order both ways, by first rowid, by frequency, by length; the last row, the
    rarest value; the runner-up by edit distance over all candidates; the first reading (value
    order) that is not the nearest candidate. None of them reads intent: each must hit the gold
    on at most 1/|readings| of the parts (module docstring)."""
    by = {c.value: c for c in cands}
    rs = [r for r in reads if r in by]
    out: dict[str, Any] = {}

    def kth(name: str, ordered: list[Any]) -> None:
        for k in range(RANK_DEPTH):
            out[f"{name}-{k + 1}"] = ordered[k] if k < len(ordered) else None

    kth("value-asc", sorted(rs, key=_order_key))
    kth("value-desc", sorted(rs, key=_order_key, reverse=True))
    rows = sorted((r for r in rs if by[r].first_row is not None), key=lambda r: by[r].first_row)
    kth("first-row", rows)
    out["last-row"] = rows[-1] if rows else None
    freq = sorted((r for r in rs if by[r].count), key=lambda r: (-by[r].count, _order_key(r)))
    kth("frequent", freq)
    out["rarest"] = freq[-1] if freq else None
    out["shortest"] = min(rs, key=lambda r: (len(str(r)), _order_key(r))) if rs else None
    out["longest"] = max(rs, key=lambda r: (len(str(r)), _order_key(r))) if rs else None
    out["runner-up-edit"] = out["not-nearest"] = None
    if surface is not None and str(surface).strip():
        s = str(surface).casefold()
        dist = sorted(by, key=lambda v: (levenshtein(s, str(v).casefold()), _order_key(v)))
        out["runner-up-edit"] = dist[1] if len(dist) > 1 else None
        others = sorted((r for r in rs if r != dist[0]), key=_order_key)
        out["not-nearest"] = others[0] if others else None
    return out


#: The answer explorers (:func:`answer_picks`): they run every reading and pick by its answer.
ANSWER_EXPLORERS = ("answer-mode", "answer-median", "answer-max", "answer-min")


def answer_groups(answers: Sequence[Any], same: Callable[[Any, Any], bool]) -> list[list[int]]:
    """The indices of ``answers`` grouped by answer (``same``: the environment's comparison),
    in order of first occurrence; an answer that is ``None`` is left out."""
    groups: list[list[int]] = []
    for i, a in enumerate(answers):
        if a is None:
            continue
        for g in groups:
            if same(answers[g[0]], a):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _scalar(answer: Any) -> float | None:
    """The number an answer of one cell holds (``None`` otherwise)."""
    try:
        ((v,),) = answer
    except (TypeError, ValueError):
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def answer_picks(
    reads: Sequence[Any], answers: Sequence[Any], same: Callable[[Any, Any], bool]
) -> dict[str, Any]:
    """Each answer explorer's pick among ``reads`` (their answers aligned in ``answers``): a
    reading of the commonest answer (``answer-mode``; a tie goes to the group whose first
    reading sorts first), of the median, largest and smallest one-cell number (``None`` where
    the answers are not numbers). Such an agent is right when its answer is the gold's, so a
    hit is a pick whose answer is the gold's; a suite whose golds are uniform over the distinct
    answers holds each at 1/|distinct answers| (module docstring, rule 4)."""
    groups = answer_groups(answers, same)
    out: dict[str, Any] = dict.fromkeys(ANSWER_EXPLORERS)
    if not groups:
        return out
    first = [min((reads[i] for i in g), key=_order_key) for g in groups]
    mode = min(range(len(groups)), key=lambda k: (-len(groups[k]), _order_key(first[k])))
    out["answer-mode"] = first[mode]
    nums = [(_scalar(answers[g[0]]), k) for k, g in enumerate(groups)]
    if all(n is not None for n, _ in nums):
        order = sorted(nums, key=lambda nk: (nk[0], _order_key(first[nk[1]])))
        out["answer-min"] = first[order[0][1]]
        out["answer-max"] = first[order[-1][1]]
        # the median over the readings (each reading one vote), as an agent would take it
        votes = [k for _, k in order for _ in groups[k]]
        out["answer-median"] = first[votes[(len(votes) - 1) // 2]]
    return out


def _like(part: str) -> str:
    """A LIKE pattern ``%part%`` (wildcards escaped with ``\\``), as an SQL literal."""
    esc = part.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _lit(f"%{esc}%")


def reach_terms(surface: str) -> tuple[list[str], int, int, list[str] | None]:
    """The terms of :func:`reach_sql` for ``surface``: ``(words, lo, hi, pieces)``. A value is
    reached when it holds every word, or when its length is within ``[lo, hi]`` and it holds one
    of the pieces (``pieces`` is ``None`` when the surface is too short to split: any value of
    that length). "Holds" is SQLite's ``LIKE '%x%'``: a substring, ASCII letters case-folded."""
    s = surface.strip()
    b = typo_bound(s)
    words = _TOKEN.findall(s) or [s]  # LIKE folds ASCII case only: keep the written case
    k = len(s) // (b + 1)
    pieces = [s[i * k : (i + 1) * k if i < b else len(s)] for i in range(b + 1)]
    return words, max(0, len(s) - b), len(s) + b, (pieces if k else None)


def reach_sql(table_sql: str, column_sql: str, surface: str, where: str = "") -> str:
    """A query for the distinct values of one column that :func:`readings` could keep for
    ``surface`` (a superset: pass its rows to :func:`readings`), so a suite reads a whole column
    of any size at the cost of one indexed-or-scanned query: values that hold each word of the
    surface, and values of a length within :func:`typo_bound` that hold one of ``bound + 1``
    pieces of the surface (an edit touches at most one piece, so one piece is left intact).
    :func:`reach_terms` names the terms; ``clarisql.envs.synth.value_index`` answers the same
    query from memory."""
    words, lo, hi, pieces = reach_terms(surface)
    conds = ["(" + " AND ".join(f"{column_sql} LIKE {_like(w)} ESCAPE '\\'" for w in words) + ")"]
    near = "1"  # too short to split: an intact piece may be empty
    if pieces is not None:
        near = " OR ".join(f"{column_sql} LIKE {_like(p)} ESCAPE '\\'" for p in pieces)
    conds.append(f"(length({column_sql}) BETWEEN {lo} AND {hi} AND ({near}))")
    w = f" AND ({where})" if where else ""
    return (
        f"SELECT DISTINCT {column_sql} FROM {table_sql} WHERE {column_sql} IS NOT NULL{w} "
        f"AND ({' OR '.join(conds)})"
    )


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
    "ANSWER_EXPLORERS",
    "EXPLORERS",
    "HALF",
    "RANK_DEPTH",
    "SURFACE_EXPLORERS",
    "TYPO_EDITS",
    "Candidate",
    "ambiguous",
    "answer_groups",
    "answer_picks",
    "choices",
    "containing",
    "contains",
    "draw",
    "fitting",
    "levenshtein",
    "made_from",
    "rank_picks",
    "reach_sql",
    "reach_terms",
    "readings",
    "related",
    "resolved_by",
    "tokens",
    "tops",
    "typo_bound",
    "value_stats",
]
