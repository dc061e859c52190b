"""Offline answerable drafts: typed templates over the profile, every gold executed.

Contract
- :func:`make_drafts` returns up to ``n`` verified :class:`~.types.Draft` objects spread
  round-robin over the cells (difficulty x type) the lake allows: ``simple`` = filters (lists,
  lookups, thresholds); ``moderate`` = casts, grouping, aggregation, top-k; ``challenging`` =
  subqueries (above-average, HAVING against the overall mean) and window functions (rank per
  group, shares). Types: ``single`` (one table), ``join`` (a discovered join pair), ``union`` (a
  discovered union pair). Deterministic for a given lake and ``rng`` state.
- Every draft's SQL is built with sqlglot (:class:`~.templates.Sel`) and executed by the
  :class:`~.verify.Verifier`: it runs within the time budget, returns 1..``max_rows`` rows, is
  not trivial (all NULL / 0) nor written in the question (every answer value a word of
  it: :func:`echoes_question`), and has an ORDER BY exactly when order matters (top-k lists,
  chronological series), ordering by every output column so ties cannot reorder rows.
  Questions are unique (case-insensitive).
- Parallel: candidates are drawn :data:`LOOKAHEAD` ahead of the one being checked, their SQL
  running on the verifier's worker threads meanwhile (:meth:`~.verify.Verifier.prefetch`); they
  are checked in the order drawn, so the drafts are the same with any number of workers.
- :class:`DraftReport` lists per cell how many drafts were made and why a cell is empty
  (no join pair, no union pair, no measure column ...), for SUITE.md's shortfalls.
"""

from __future__ import annotations

import random
from collections import Counter, deque

from clarisql.envs.synth.answerable_join import join_makers, union_makers
from clarisql.envs.synth.answerable_single import scope_of, shown, single_makers
from clarisql.envs.synth.drafting import LOOKAHEAD, Candidate, DraftContext, DraftReport, Maker
from clarisql.envs.synth.types import (
    DIFFICULTIES,
    QTYPES,
    Draft,
    LakeProfile,
)
from clarisql.envs.synth.verify import Verifier, echoes_question


def makers(cx: DraftContext) -> dict[tuple[str, str], list[Maker]]:
    """Every (difficulty, type) cell's makers (an empty list when the data does not allow)."""
    cells: dict[tuple[str, str], list[Maker]] = {}
    per_type = {"single": single_makers(cx), "join": join_makers(cx), "union": union_makers(cx)}
    for qt in QTYPES:
        for d in DIFFICULTIES:
            cells[(d, qt)] = per_type[qt].get(d, [])
    return cells


def why_empty(lake: LakeProfile, qtype: str, difficulty: str) -> str:
    if qtype == "join" and not lake.joins:
        return "no joinable column pair was discovered"
    if qtype == "union" and not lake.unions:
        return "no unionable table pair was discovered"
    return f"no table has the columns {difficulty} {qtype} templates need (labels, measures, dimensions)"


def make_drafts(
    lake: LakeProfile,
    v: Verifier,
    rng: random.Random,
    n: int,
    report: DraftReport | None = None,
    max_fails_per_cell: int = 60,
    exclude: set[str] | None = None,
) -> list[Draft]:
    """Up to ``n`` verified drafts, round-robin over the cells (see the module docstring).

    ``exclude``: questions (case-folded) already taken, e.g. by an earlier call.
    """
    report = report if report is not None else DraftReport()
    cx = DraftContext(lake, v, rng)
    cx.seen |= set(exclude or ())
    cells = makers(cx)
    for (d, qt), ms in cells.items():
        if not ms and not report.made[f"{d}/{qt}"]:
            report.missing[f"{d}/{qt}"] = why_empty(lake, qt, d)
    live = [c for c, ms in cells.items() if ms]
    fails: Counter = Counter()
    out: list[Draft] = []
    ahead: deque[tuple[tuple[str, str], Candidate | None]] = deque()
    i = 0
    cx.deferred = True
    try:
        while len(out) < n and live:
            while len(ahead) < LOOKAHEAD:  # draw ahead; the verifier starts their SQL
                cell = live[i % len(live)]
                i += 1
                ms = cells[cell]
                c = ms[rng.randrange(len(ms))]()
                if isinstance(c, Candidate):
                    v.prefetch([c.sql, *([c.slots["ranked"]] if "ranked" in c.slots else [])])
                ahead.append((cell, c))
            cell, c = ahead.popleft()
            if cell not in live:
                continue
            report.attempts += 1
            dr = cx.check(c) if isinstance(c, Candidate) else c
            if dr is None:
                fails[cell] += 1
                if fails[cell] > max_fails_per_cell:
                    live.remove(cell)
                    if not report.made[f"{cell[0]}/{cell[1]}"]:
                        report.missing[f"{cell[0]}/{cell[1]}"] = (
                            "every candidate failed verification"
                        )
            else:
                fails[cell] = 0
                out.append(dr)
                report.made[f"{cell[0]}/{cell[1]}"] += 1
    finally:
        cx.deferred = False
        v.discard_pending()
    report.rejected.update(e.split(":")[0][:60] for e in cx.rejected)
    return out


__all__ = [
    "Candidate",
    "DraftContext",
    "DraftReport",
    "echoes_question",
    "make_drafts",
    "makers",
    "scope_of",
    "shown",
]
