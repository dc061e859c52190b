"""Which task kinds a suite lacks, and why the lake did not allow them (for SUITE.md).

:func:`coverage_notes` compares the kinds the layers can make with the kinds a list of tasks
holds; for each missing kind it states what the lake lacks (from the profile alone, the same
column roles the layers use) or, when the lake has what the kind needs, that no candidate passed
the checks (e.g. no misspelling that two values could stand for).
"""

from __future__ import annotations

from collections.abc import Iterable

from clarisql.envs.synth.layers.common import entities, families, measures, scopes
from clarisql.envs.synth.types import LakeProfile
from clarisql.envs.tasks import UNANSWERABLE_KINDS, Task

#: The kinds the layers make: (key, what it needs in words).
KINDS: tuple[tuple[str, str], ...] = (
    ("select", "a table with a numeric measure"),
    (
        "from:Missing",
        "a scope column (2-30 values), a date column or a family of same-schema tables",
    ),
    ("from:Error", "a text scope column where a misspelling or a shared prefix fits >= 2 values"),
    ("from:Unmatch", "an integer year column, a date column or a family of yearly tables"),
    ("where:not-exist", "a name column where an abbreviation or misspelling fits >= 2 names"),
    ("mixed", "two of the above in one table"),
    *((f"unanswerable:{k}", "") for k in UNANSWERABLE_KINDS[:5]),
    ("write", "a table whose first column is a key, or a name / scope column with a measure"),
    ("write:underspecified", "a name or scope column next to a writable measure, or a family"),
)


def task_kinds(tasks: Iterable[Task]) -> set[str]:
    """The :data:`KINDS` keys the tasks cover."""
    out: set[str] = set()
    for t in tasks:
        if not t.answerable:
            out.add(f"unanswerable:{t.unanswerable_kind}")
        elif t.writable:
            out.add("write:underspecified" if t.underspecs else "write")
        elif t.category in ("select", "mixed"):
            out.add(t.category)
        elif t.category == "from":
            out |= {f"from:{u.label.kind}" for u in t.underspecs}
        elif t.category == "where":
            out.add("where:not-exist")
    return out


def _lacks(lake: LakeProfile) -> dict[str, str]:
    """What the lake lacks for each kind ('' when it has what the kind needs)."""
    tables = [t for t in lake.tables if t.rows > 0 and t.usable() and lake.is_subject(t.name)]
    has_m = any(measures(t) for t in tables)
    has_s = any(scopes(t) for t in tables)
    has_text_s = any(c.kind == "text" for t in tables for c in scopes(t))
    has_date = any(c.kind == "date" for t in tables for c in t.usable())
    has_year = any(
        c.kind == "integer" and "year" in c.name.lower() for t in tables for c in t.usable()
    )
    fams = families(lake)
    has_e = any(entities(t) for t in tables)
    lacks = {
        "select": "" if has_m else "no numeric measure column",
        "from:Missing": ""
        if has_s or has_date or fams
        else "no scope column, date or table family",
        "from:Error": "" if has_text_s else "no text scope column",
        "from:Unmatch": ""
        if has_year or has_date or fams
        else "no year column, date or yearly tables",
        "where:not-exist": "" if has_e else "no name column (text, >= 5 short values)",
        "mixed": ""
        if has_m and (has_s or has_e or has_date)
        else "no table with two unclear parts",
        "unanswerable:" + UNANSWERABLE_KINDS[0]: ""
        if len(tables) >= 2
        else "only one usable table",
    }
    return lacks


def coverage_notes(lake: LakeProfile, tasks: Iterable[Task]) -> list[str]:
    """One line per kind the tasks lack: ``"from:Error: none (no text scope column)"``."""
    have = task_kinds(tasks)
    lacks = _lacks(lake)
    notes = []
    for key, needs in KINDS:
        if key in have:
            continue
        why = lacks.get(key, "")
        if not why:
            why = "no candidate passed the checks" + (f"; it needs {needs}" if needs else "")
        notes.append(f"{key}: none ({why})")
    return notes


__all__ = ["KINDS", "coverage_notes", "task_kinds"]
