"""Withheld columns: attributes the database itself decides are absent.

Why: a column-related request (TrustSQL's kind ``[1]``) asks for an attribute the schema does not
have. Drawn only from what entities have in the world (a person's ``nationality``, a city's
``population``), the words themselves tell a reader of many schemas that few databases store it,
and a classifier trained on one database's suite abstains on another's from the words alone. A
withheld column is a real attribute of this database's own rows (a track's ``composer``, a
customer's ``phone``), dropped from the suite's copy of the data (``lake.sqlite``, never the
user's file) before any task is made: the request for it reads like every answerable request
about the table's other columns, and only the schema the agent is shown decides. (DTE /
TriageSQL-style benchmarks make unanswerable questions the same way, by removing a column from
the schema; here the request is still TrustSQL's, with its answerable twin.)

Contract
- :func:`withhold` picks attributes of up to ``k`` columns in all, spread over the tables, one
  column's first. An attribute is every
  column that may hold it (:func:`~.layers.unanswerable.holders`, at most :data:`MAX_GROUP`: a
  customer's and a store's ``phone`` in a lake where customers reach the stores go together,
  or neither), and each is dropped from the lake database (``ALTER TABLE ... DROP COLUMN`` in
  one savepoint, after the indexes synthesis itself made on it; an attribute SQLite will not
  drop a column of, because the database's own index, view, trigger or constraint uses it, is
  not withheld), then ``VACUUM`` so no free page keeps its
  values. It returns the lake profile without them and with ``withheld`` set: ``(table,
  column, words)`` per dropped column, the words a request asks it by (the twins' phrasing,
  :func:`~clarisql.envs.synth.phrasing.attr_words`; empty where no request may ask it: a link
  table's, or one a join path still doubts).
- Only columns whose absence the schema then truly decides (:func:`eligible`): non-key,
  speakable attributes (no identifier, flag, coordinate, blob, name or title, timestamp the
  database sets, join or union column, a table's only measure, no total or count over
  other rows
  (:func:`~.layers.writes.derived_columns`), which a query could still compute, and no column
  column-surface asks other rows about (``surface_candidates``: the employees' birth date asked
  of a customer; withheld, the suite would have no column-surface request)); without them
  no column may hold the words (:func:`~.layers.unanswerable.absent`; the embedder's check
  comes in the layer, which asks a column only if it agrees) and
  no table the request is about reaches one with their head noun
  (:meth:`~.layers.unanswerable._UnansGen.in_doubt`); every table keeps a name for its rows
  and a column an answerable twin may ask (:func:`_keeps`).
- Seeded (``random.Random(f"{seed}:withhold")``): the same sources and seed withhold the same
  columns. ``k`` is :func:`default_count` unless the config says (``--withhold N``; 0: none,
  and no step of the pipeline draws differently from a run without withholding).
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import apsw

from clarisql.envs.state.digest import DEFAULT_VOLATILE_COLUMNS
from clarisql.envs.synth.column_roles import column_role
from clarisql.envs.synth.layers.common import entities, human, id_like_name, is_measure, qi
from clarisql.envs.synth.layers.unanswerable import (
    _row,
    _UnansGen,
    absent,
    holders,
    words,
)
from clarisql.envs.synth.names import speakable, split_name
from clarisql.envs.synth.phrasing import attr_words
from clarisql.envs.synth.types import ColumnProfile, LakeProfile, TableProfile
from clarisql.envs.synth.verify import Verifier

#: one withheld column per this many unanswerable tasks (a fifth of them column-related),
#: at most :data:`MAX_COLUMNS` (a 300-task suite, 150 unanswerable, withholds 6 where it can)
UNANSWERABLE_PER_COLUMN = 25
MAX_COLUMNS = 12


def default_count(unanswerable: int) -> int:
    """How many columns a suite with ``unanswerable`` unanswerable tasks withholds at most by
    default (none when it asks none)."""
    return min(MAX_COLUMNS, math.ceil(max(0, unanswerable) / UNANSWERABLE_PER_COLUMN))


def _without(lake: LakeProfile, table: str, column: str) -> LakeProfile:
    tables = tuple(
        dataclasses.replace(t, columns=tuple(c for c in t.columns if c.name != column))
        if t.name == table
        else t
        for t in lake.tables
    )
    return dataclasses.replace(lake, tables=tables)


def _keeps(t: TableProfile, gone: set[str]) -> bool:
    """``t`` without the columns ``gone`` still names its rows (a name column, a unique one where
    it had one; or a unique column where it had no name) and keeps a column an answerable twin
    may ask where it had one."""
    names = entities(t)
    rest = [x for x in names if x.name not in gone]
    if names and not rest:
        return False
    uniq = [x for x in t.columns if x.unique and x.kind in ("text", "integer")]
    if any(x.unique for x in names) and not any(x.unique for x in rest):
        return False
    if uniq and all(x.name in gone for x in uniq):
        return False
    named = {x.name for x in names}  # (a twin about a named row asks another column)
    twins = [x for x in _UnansGen.twin_columns(t, set()) if x.name not in named]
    return not twins or any(x.name not in gone for x in twins)


#: the most columns one withheld attribute may take (all that may hold it go together)
MAX_GROUP = 3

Member = tuple[TableProfile, ColumnProfile, str]


def eligible(lake: LakeProfile, v: Verifier) -> list[tuple[str, tuple[Member, ...]]]:
    """Every attribute :func:`withhold` may withhold: ``(words, members)``, the columns (at most
    :data:`MAX_GROUP`) that may hold it (:func:`~.layers.unanswerable.holders`: the
    ``customer_phone`` and the ``store_phone`` of a lake whose customers reach the stores), all
    of them droppable, each with the words a request asks it by; without them no column of the
    lake may hold the attribute and no table it is asked of doubts it (see the module
    docstring). In the lake's order."""
    from clarisql.envs.synth.layers.writes import derived_columns

    gen = _UnansGen(lake, v, random.Random(0))
    joined = {x for j in lake.joins for x in (j.left, j.right)}
    for u in lake.unions:
        joined |= {(u.left, a) for a, _ in u.column_map} | {(u.right, b) for _, b in u.column_map}
    derived = derived_columns(lake, v)
    semantic = None  # (spelling only: loading the embedder here would keep the stages
    # from forking; the unanswerable layer asks a withheld column only if it agrees)
    subjects = {t.name for t in gen.tables}
    # a column column-surface asks other rows about (the employees' birth date asked of a
    # customer) stays: withheld, the suite would lose that kind of request altogether
    surface = {(b.name, c.name) for t in gen.tables for b, c in gen.surface_candidates(t)}

    def droppable(t: TableProfile, c: ColumnProfile) -> bool:
        return not (  # (a column too sparse for a draft is still an attribute of the rows)
            (t.name, c.name) in joined
            or (t.name, c.name) in derived
            or (t.name, c.name) in surface
            or c.key_part
            or id_like_name(c.name)
            or not speakable(c.name)
            or c.name.lower() in DEFAULT_VOLATILE_COLUMNS
            or column_role(c) in ("identifier", "flag", "coordinate")
            or c.kind == "blob"
            or {"name", "title"} & set(split_name(c.name))  # (what the rows are called)
            or (is_measure(c) and [x for x in t.columns if is_measure(x)] == [c])
            or not _keeps(t, {c.name})
        )

    out: list[tuple[str, tuple[Member, ...]]] = []
    seen: set[frozenset[tuple[str, str]]] = set()
    for t in gen.tables:
        for c in t.columns:
            if not droppable(t, c):
                continue
            attr = attr_words(human(c.name), _row(t))
            group = list(holders(attr, list(lake.tables), semantic))
            if (t, c) not in group:
                group.append((t, c))
            key = frozenset((x.name, y.name) for x, y in group)
            if key in seen or len(group) > MAX_GROUP:
                continue
            seen.add(key)
            aw = words(attr)  # (every holder is the attribute itself: a ``billing city`` with
            if not all(  # the ``city``, never the ``street address`` of an ``email address``)
                droppable(x, y)
                and (wy := words(attr_words(human(y.name), _row(x))))
                and (wy <= aw or aw <= wy)
                for x, y in group
            ):
                continue
            gone: dict[str, set[str]] = {}
            for x, y in group:
                gone.setdefault(x.name, set()).add(y.name)
            if not all(_keeps(lake.table(n), cols) for n, cols in gone.items()):
                continue
            pruned = lake
            for x, y in group:
                pruned = _without(pruned, x.name, y.name)
            if not absent(attr, list(pruned.tables), semantic):
                continue
            check = _UnansGen(pruned, v, random.Random(0))
            members = []  # (every holder goes; those asked are the ones no join path doubts)
            for x, y in group:
                said = attr_words(human(y.name), _row(x))
                askable = x.name in subjects and not check.in_doubt(pruned.table(x.name), said)
                members.append((x, y, said if askable else ""))
            if any(x.name == t.name and y.name == c.name and said for x, y, said in members):
                out.append((attr, tuple(members)))
    return out


def _own_indexes(conn: apsw.Connection, table: str, column: str) -> list[str]:
    """The indexes on ``column`` that synthesis made itself (``synth_idx_``:
    :func:`~.discover.index_lake`); the database's own indexes stay and keep the column."""
    out = []
    for row in conn.execute(f"PRAGMA index_list({qi(table)})"):
        name = row[1]
        cols = [r[2] for r in conn.execute(f"PRAGMA index_info({qi(name)})")]
        if name.startswith("synth_idx_") and column in cols:
            out.append(name)
    return out


def withhold(lake: LakeProfile, db_path: Path, k: int, seed: int | str) -> LakeProfile:
    """Withhold :func:`eligible` attributes of up to ``k`` columns in all (drawn with the seed,
    those of one column first, spread over the tables: a table gives a second column only when
    no other can give its first): every column of each is dropped from ``db_path`` together
    (or none of them), then ``VACUUM``; the lake profile without them, ``withheld`` set (module
    docstring)."""
    if k <= 0:
        return lake
    v = Verifier(db_path)
    try:
        cands = eligible(lake, v)
    finally:
        v.close()
    rng = random.Random(f"{seed}:withhold")
    rng.shuffle(cands)
    cands.sort(key=lambda x: len(x[1]))  # (an attribute of one column first: the least data)
    chosen: list[tuple[str, tuple[Member, ...]]] = []
    gone: dict[str, set[str]] = {}
    words_taken: set[str] = set()
    for depth in (1, 2):  # (first no table loses a second column)
        for attr, members in cands:
            if sum(len(m) for _, m in chosen) + len(members) > k or attr in words_taken:
                continue
            after = {n: set(cols) for n, cols in gone.items()}
            for x, y, _ in members:
                after.setdefault(x.name, set()).add(y.name)
            if any(len(after[x.name]) > depth for x, _, _ in members):
                continue
            if all(_keeps(lake.table(n), cols) for n, cols in after.items()):
                chosen.append((attr, members))
                gone, words_taken = after, words_taken | {attr}
    if not chosen:
        return lake
    got: list[tuple[str, str, str]] = []
    conn = apsw.Connection(str(db_path))
    try:
        for _, members in chosen:
            conn.execute("SAVEPOINT withhold")
            try:
                for x, y, _ in members:
                    for idx in _own_indexes(conn, x.name, y.name):  # (synthesis made them)
                        conn.execute(f"DROP INDEX {qi(idx)}")
                    conn.execute(f"ALTER TABLE {qi(x.name)} DROP COLUMN {qi(y.name)}")
            except apsw.Error:  # (an index, view, trigger or constraint uses one: none goes)
                conn.execute("ROLLBACK TO withhold")
                conn.execute("RELEASE withhold")
                continue
            conn.execute("RELEASE withhold")
            for x, y, said in members:
                lake = _without(lake, x.name, y.name)
                got.append((x.name, y.name, said))
        if got:
            conn.execute("VACUUM")  # (no free page keeps a withheld value)
    finally:
        conn.close()
    return dataclasses.replace(lake, withheld=tuple(sorted(got)))


__all__ = [
    "MAX_COLUMNS",
    "MAX_GROUP",
    "UNANSWERABLE_PER_COLUMN",
    "default_count",
    "eligible",
    "withhold",
]
