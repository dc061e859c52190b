"""Answer and state matching (Pass@1 execution match, final-state digest match).

Contract of :func:`execution_match` (Pass@1), strict but fair:
- The same number of rows and of columns, always: an answer with an extra column fails (no
  superset cheat: ``SELECT *`` never passes for a one-column gold).
- Column order does not matter (Spider's test-suite rule): the answer passes when some
  permutation of its columns matches the gold; candidates are only the permutations that map
  each column onto a gold column holding the same values, so the search stays small.
- Rows compare as multisets (as sequences when ``ordered``); numbers as numbers (``1 == 1.0``)
  within ``rel_tol``/``abs_tol``; strings exactly.
- Rounding: a number written with ``d >= round_digits`` decimals (default 2, the tolerance a
  task states as "to two decimals") matches the other side's value rounded to ``d`` decimals
  (``ROUND(AVG(x), 2)`` = 2.67 passes for a gold of 2.6667; 2.7 or 3 do not).
- Per-task tolerance: a task states the rounding it accepts (``metadata["round_digits"]``,
  written by ``clarisql synth`` from the gold's own precision, :func:`stated_round_digits`):
  ``2`` for a computed number (an average, a ratio: many decimals), ``0`` (exact, rounding
  off) when every number of the gold is a stored value of few decimals, so ``40.71`` does not
  pass for a stored ``40.7128``. The episode record carries it
  (``EpisodeRecord.gold_round_digits``); a record without it (older runs, tasks that state
  none) is scored by the default rule above.
Saved runs keep both row lists, so ``clarisql rescore`` applies the rule to old runs.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

REL_TOL = 1e-6
ABS_TOL = 1e-9
#: a float written with at least this many decimals may be the other value rounded to them
ROUND_DIGITS = 2
#: a float with more decimals than this is a computed value, not a stored one
STORED_DECIMALS = 4
#: column permutations tried at most per comparison (beyond, only the given order counts)
MAX_PERMUTATIONS = 720
#: rows up to which an unordered comparison that fails after sorting is tried row by row
MAX_PAIRING_ROWS = 300


def _norm(v: Any) -> tuple[int, Any]:
    """Sort key and comparison form: numbers compare as numbers (1 == 1.0), bool as int."""
    if v is None:
        return (0, None)
    if isinstance(v, bool):
        return (1, float(v))
    if isinstance(v, (int, float)):
        f = float(v)
        return (1, f if math.isfinite(f) else repr(f))
    if isinstance(v, (bytes, bytearray, memoryview)):
        return (3, bytes(v))
    return (2, str(v))


def _decimals(f: float) -> int:
    """Decimals in the shortest repr of a finite float (``2.67`` -> 2, ``3.0`` -> 0)."""
    text = repr(f)
    if "e" in text or "E" in text:
        mant, _, exp = text.lower().partition("e")
        frac = mant.partition(".")[2].rstrip("0")
        return max(0, len(frac) - int(exp))
    frac = text.partition(".")[2].rstrip("0")
    return len(frac)


def _rounded_eq(a: float, b: float, digits: int) -> bool:
    """One of the two is the other rounded to its own ``>= digits`` decimals."""
    for x, y in ((a, b), (b, a)):
        d = _decimals(x)
        if digits <= d <= 15 and abs(x - y) <= 0.5 * 10.0**-d * (1 + 1e-9) + 1e-12:
            return True
    return False


def _value_eq(
    a: tuple[int, Any], b: tuple[int, Any], rel: float, abs_: float, digits: int = ROUND_DIGITS
) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == 1 and isinstance(a[1], float) and isinstance(b[1], float):
        return math.isclose(a[1], b[1], rel_tol=rel, abs_tol=abs_) or (
            digits > 0 and _rounded_eq(a[1], b[1], digits)
        )
    return a[1] == b[1]


def _row_key(row: Sequence[tuple[int, Any]]) -> tuple[Any, ...]:
    # Round floats for sorting only, so rows within tolerance land next to each other.
    return tuple(
        (k, round(v, 6) if isinstance(v, float) else v) if k == 1 else (k, v) for k, v in row
    )


def execution_match(
    predicted: Sequence[Sequence[Any]] | None,
    gold: Sequence[Sequence[Any]] | None,
    *,
    ordered: bool = False,
    rel_tol: float = REL_TOL,
    abs_tol: float = ABS_TOL,
    round_digits: int = ROUND_DIGITS,
) -> bool:
    """Pass@1 execution match (see the module docstring: column order free, rounding to
    ``round_digits`` or more decimals accepted, extra columns fail; ``round_digits=0`` turns
    rounding off).

    ``predicted=None`` (no answer, or the query failed) never matches, not even an empty gold.
    """
    if predicted is None or gold is None:
        return False
    if len(predicted) != len(gold):
        return False
    memo = getattr(_LAST, "call", None)
    key = (ordered, rel_tol, abs_tol, round_digits)
    if memo is not None and memo[0] is predicted and memo[1] is gold and memo[2] == key:
        return memo[3]
    ok = _exactly_equal(predicted, gold, ordered) or _tolerant_match(
        predicted, gold, ordered, rel_tol, abs_tol, round_digits
    )
    # a finished episode asks the same question several times (outcome, reliability, the
    # record's flag): keep the last answer per thread, by identity of the two row lists
    _LAST.call = (predicted, gold, key, ok)
    return ok


_LAST = threading.local()


def _exactly_equal(
    predicted: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]], ordered: bool
) -> bool:
    """C-speed check for the common case: the same values (Python equality: 1 == 1.0).

    Equal here implies equal under the tolerant comparison, so only ``True`` is final; a
    ``False`` falls through to :func:`_tolerant_match` (NaN, near floats, huge ints).
    """
    try:
        p = [tuple(r) for r in predicted]
        g = [tuple(r) for r in gold]
        if ordered:
            return p == g
        # dict equality runs in C; Counter's own == is a Python loop (3.11)
        return dict.__eq__(Counter(p), Counter(g))
    except TypeError:  # an unhashable value: let the tolerant path decide
        return False


def _tolerant_match(
    predicted: Sequence[Sequence[Any]],
    gold: Sequence[Sequence[Any]],
    ordered: bool,
    rel_tol: float,
    abs_tol: float,
    round_digits: int = ROUND_DIGITS,
) -> bool:
    """The full comparison: values within tolerance, rows as multisets unless ``ordered``, and
    any column permutation that maps columns onto gold columns with the same values."""
    if len(predicted) != len(gold):
        return False
    p = [[_norm(v) for v in r] for r in predicted]
    g = [[_norm(v) for v in r] for r in gold]
    ragged = bool(p) and (
        any(len(r) != len(p[0]) for r in p) or any(len(r) != len(g[0]) for r in g)
    )
    if not p or ragged:
        return _rows_match(p, g, ordered, rel_tol, abs_tol, round_digits)
    if p and len(p[0]) != len(g[0]):
        return False  # another number of columns: never (an extra column is no answer)
    eq = partial(_value_eq, rel=rel_tol, abs_=abs_tol, digits=round_digits)
    for perm in _column_permutations(p, g, eq):
        rows = p if perm is None else [[r[j] for j in perm] for r in p]
        if _rows_match(rows, g, ordered, rel_tol, abs_tol, round_digits):
            return True
    return False


def _column_permutations(
    p: list[list[tuple[int, Any]]], g: list[list[tuple[int, Any]]], eq: Any
) -> Iterator[tuple[int, ...] | None]:
    """``None`` (the given order) first, then each other assignment of predicted columns to gold
    columns whose sorted values agree (at most :data:`MAX_PERMUTATIONS`)."""
    yield None
    if not p or len(p[0]) < 2:
        return
    n = len(p[0])

    def column(rows: list[list[tuple[int, Any]]], j: int) -> list[tuple[int, Any]]:
        try:
            return sorted((r[j] for r in rows), key=lambda v: _row_key([v]))
        except TypeError:
            return sorted((r[j] for r in rows), key=repr)

    pc = [column(p, j) for j in range(n)]
    gc = [column(g, i) for i in range(n)]
    options = [
        [j for j in range(n) if all(eq(a, b) for a, b in zip(pc[j], gc[i]))] for i in range(n)
    ]
    if any(not o for o in options):
        return
    tried = 0
    identity = tuple(range(n))
    for perm in itertools.product(*options):
        if len(set(perm)) != n or perm == identity:
            continue
        tried += 1
        if tried > MAX_PERMUTATIONS:
            return
        yield perm


def _rows_match(
    p: list[list[tuple[int, Any]]],
    g: list[list[tuple[int, Any]]],
    ordered: bool,
    rel_tol: float,
    abs_tol: float,
    round_digits: int,
) -> bool:
    if any(len(a) != len(b) for a, b in zip(p, g)) and ordered:
        return False
    if not ordered:
        try:
            p = sorted(p, key=_row_key)
            g = sorted(g, key=_row_key)
        except TypeError:  # mixed incomparable kinds in one column: fall back to repr
            p = sorted(p, key=repr)
            g = sorted(g, key=repr)

    def same(a: list[tuple[int, Any]], b: list[tuple[int, Any]]) -> bool:
        return len(a) == len(b) and all(
            _value_eq(x, y, rel_tol, abs_tol, round_digits) for x, y in zip(a, b)
        )

    if all(same(a, b) for a, b in zip(p, g)):
        return True
    if ordered or len(p) > MAX_PAIRING_ROWS:
        return False
    # sorting may order two rows differently when their values differ within tolerance: pair
    # each predicted row with an unused gold row it matches
    free = list(range(len(g)))
    for a in p:
        for k, i in enumerate(free):
            if same(a, g[i]):
                del free[k]
                break
        else:
            return False
    return True


def stated_round_digits(gold: Sequence[Sequence[Any]] | None) -> int:
    """The rounding a task with this gold answer accepts (its own precision): ``ROUND_DIGITS``
    when some number has more than :data:`STORED_DECIMALS` decimals (computed), else ``0``
    (numbers compare exactly, within ``rel_tol``)."""
    for row in gold or ():
        for v in row:
            if isinstance(v, float) and math.isfinite(v) and _decimals(v) > STORED_DECIMALS:
                return ROUND_DIGITS
    return 0


def state_match(final_digest: str | None, gold_digest: str | None) -> bool:
    """Final-state digest match; a missing digest never matches."""
    return final_digest is not None and gold_digest is not None and final_digest == gold_digest
