"""Data types shared by the synthesis core (ingest, profile, discovery, drafts) and its layers.

Every type here is plain data: profiles are frozen (hashable, safe to share between layers),
:class:`Draft` is mutable so that a layer may copy and adjust it. Nothing here touches a database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def quote_ident(name: str) -> str:
    """``name`` as a double-quoted SQLite identifier (embedded quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def sql_lit(v: Any) -> str:
    """``v`` as an SQLite literal (numbers as numbers, everything else as a quoted string)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


class SynthError(ValueError):
    """Bad synthesis input (missing/empty/corrupt source, unusable table, bad option)."""


@dataclass(frozen=True)
class ColumnProfile:
    """What the profiler learned about one column.

    - ``kind``: inferred from the values, one of ``integer``, ``real``, ``text``, ``date``,
      ``boolean`` (not the declared type: open data stores numbers as TEXT).
    - ``needs_cast``: numbers or dates stored as TEXT (possibly next to ``'NA'`` or ``''``); SQL
      over them must ``CAST`` and filter the missing markers.
    - ``distinct``: number of distinct non-missing values; ``missing``: share of NULL / ``''`` /
      ``'NA'``-like values.
    - ``samples``: at most 20 non-missing values, most frequent first, ties by value.
    - ``min`` / ``max``: over non-missing values for numbers and dates, ``None`` for text.
    - ``unique``: a key candidate (every row non-missing and distinct).
    - ``low_information``: OrQA's rule, ``(distinct < 10 and rows < 30) or missing > 0.8``.
    - ``key_part``: the column is part of a declared primary or foreign key (an identifier
      whatever its values look like: a flight number in a composite key is not a measure).
    - ``free_text``: prose (long, mostly-unique texts of several words: reviews, descriptions,
      notes), the columns SUQL's ``ANSWER``/``SUMMARY`` read (see ``profile.is_free_text``).
    """

    table: str
    name: str
    declared: str
    kind: str
    needs_cast: bool
    rows: int
    distinct: int
    missing: float
    samples: tuple
    min: Any
    max: Any
    unique: bool
    low_information: bool
    free_text: bool = False
    #: part of the table's declared primary key (composite too) or of a declared foreign key
    key_part: bool = False

    def ref(self) -> str:
        """``"table"."name"`` with quoted identifiers."""
        return f"{quote_ident(self.table)}.{quote_ident(self.name)}"


@dataclass(frozen=True)
class TableProfile:
    """One table: its row count and column profiles (in the table's column order)."""

    name: str
    rows: int
    columns: tuple[ColumnProfile, ...]

    def usable(self) -> tuple[ColumnProfile, ...]:
        """The columns that are not low-information."""
        return tuple(c for c in self.columns if not c.low_information)

    def column(self, name: str) -> ColumnProfile:
        """The profile of column ``name``; ``KeyError`` if the table has none."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name!r} has no column {name!r}")


@dataclass(frozen=True)
class JoinPair:
    """A joinable pair: ``left``'s values are (mostly) contained in ``right``'s (FK -> key).

    ``score`` is on OrQA's 0-10 scale: the offline score (containment, name similarity,
    cardinality), or the LLM's score when synthesis runs with ``--llm``.
    """

    left: tuple[str, str]
    right: tuple[str, str]
    containment: float
    name_similarity: float
    score: float
    #: the other key paths between the same two tables (``(left, right)`` column pairs); a
    #: task over this join is kept only when each of them gives the same answer
    alternatives: tuple[tuple[tuple[str, str], tuple[str, str]], ...] = ()


def join_on(left: tuple[str, str], right: tuple[str, str]) -> str:
    """The ON condition of a join pair, as every drafter writes it."""
    return (
        f"{quote_ident(left[0])}.{quote_ident(left[1])} = "
        f"{quote_ident(right[0])}.{quote_ident(right[1])}"
    )


@dataclass(frozen=True)
class UnionPair:
    """Same-schema (or mappable) tables, e.g. one table per year or per region.

    ``column_map`` pairs a column of ``left`` with the matching column of ``right``.
    """

    left: str
    right: str
    column_map: tuple[tuple[str, str], ...]
    score: float


@dataclass(frozen=True)
class LakeProfile:
    """The profiled lake: one SQLite database, its tables, and the discovered pairs."""

    db_path: Path
    tables: tuple[TableProfile, ...]
    joins: tuple[JoinPair, ...] = ()
    unions: tuple[UnionPair, ...] = ()
    #: helper tables (calendars, number sequences) left out of ``tables``: nothing is asked
    #: about them (:func:`clarisql.envs.synth.discover.helper_tables`)
    helpers: tuple[TableProfile, ...] = ()
    #: link and mirror tables: kept in ``tables`` and join paths, but no question or request is
    #: about them (:func:`clarisql.envs.synth.discover.subjectless_tables`)
    non_subjects: tuple[str, ...] = ()
    #: columns dropped from the suite's copy of the data so that column-related requests may
    #: ask for them: ``(table, column, words asked)`` (:mod:`clarisql.envs.synth.withhold`)
    withheld: tuple[tuple[str, str, str], ...] = ()

    def is_subject(self, name: str) -> bool:
        """Whether a question or request may be about table ``name``'s rows: not a link or
        mirror table, and a name that can be put in words
        (:func:`~clarisql.envs.synth.names.table_speakable`: no ``adressen`` or ``kurse`` in an
        English question)."""
        from clarisql.envs.synth.names import table_speakable

        return name not in self.non_subjects and table_speakable(name)

    def table(self, name: str) -> TableProfile:
        """The profile of table ``name``; ``KeyError`` if the lake has none."""
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"the lake has no table {name!r}")


@dataclass
class Draft:
    """One verified answerable read query with its question and structure.

    - ``difficulty``: ``simple`` | ``moderate`` | ``challenging`` (OrQA/BIRD levels).
    - ``qtype``: ``single`` | ``join`` | ``union``.
    - ``columns``: ``'table.column'`` strings; ``operations``: e.g. ``('filter', 'cast',
      'group', 'avg', 'window', 'subquery')``.
    - ``rows``: the executed gold answer; ``ordered``: the gold has a meaningful ORDER BY.
    - ``slots``: structured parts layers may vary (all keys optional): ``'measure'``:
      ``(table, column)``, ``'agg'``: ``'avg' | 'sum' | ...``, ``'filters'``:
      ``[(table, column, op, value)]``, ``'group_by'``: ``(table, column)``, ``'scope'``:
      ``(table, column, value)`` (a scoping-dimension filter).
    - ``meta``: ``review_count``, ``generation_time_s``, ``tokens``, ``rejected`` (errors).
    """

    sql: str
    question: str
    difficulty: str
    qtype: str
    tables: tuple[str, ...]
    columns: tuple[str, ...]
    operations: tuple[str, ...]
    rows: list[tuple]
    ordered: bool
    slots: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


DIFFICULTIES = ("simple", "moderate", "challenging")
QTYPES = ("single", "join", "union")

__all__ = [
    "sql_lit",
    "DIFFICULTIES",
    "QTYPES",
    "ColumnProfile",
    "Draft",
    "JoinPair",
    "join_on",
    "LakeProfile",
    "TableProfile",
    "UnionPair",
    "quote_ident",
]
