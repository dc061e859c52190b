"""OrQA-style discovery: joinable column pairs and unionable table pairs across a lake.

Contract
- :func:`discover` returns ``lake`` with ``joins`` and ``unions`` filled, each sorted by
  descending score then by name (deterministic), keeping pairs scoring at least ``min_score`` on
  OrQA's 0-10 scale.
- Joinable (``left -> right``) only on keys: ``right`` is unique (every present value once;
  checked on the data, declared keys too), kinds compatible (integer with integer, text/date
  with text/date), ``left`` has at least 3 distinct values and its present values are
  contained in ``right``'s (containment >= ``min_containment``). Declared foreign keys come
  first (``PRAGMA foreign_key_list``): between two tables that declare one, no other pair is
  inferred. Otherwise the names must agree (:func:`name_similarity` >= ``min_name_similarity``
  for every kind: values alone overlap by chance, an alternate identifier column is not the
  key). When several key paths remain between two tables, the best is kept and the others are
  its ``alternatives``: a task over that join is kept only when every path gives the same
  answer (``answerable.DraftContext.check``).
  Offline score: ``10 * (0.5 containment + 0.25 name similarity + 0.25 key-ness)``.
- Candidates: exact containment over every column pair when the lake has at most
  ``exact_limit`` candidate columns; otherwise datasketch's MinHash LSH Ensemble (containment
  search, the OrQA/JOSIE family of indexes) proposes the pairs and exact containment confirms
  them, so the result never holds a false positive (it may miss a pair LSH did not propose).
- Unionable: two tables whose columns map one to one by normalised name and compatible kind
  over at least 80 % of both schemas; score ``10 * (0.6 schema overlap + 0.4 value overlap)``,
  value overlap being the mean Jaccard similarity of the mapped text columns' samples (1 when
  none is text).
- Helper tables (:func:`helper_tables`) leave ``tables`` for ``helpers`` before any pair is
  sought: a calendar (consecutive days, weeks or months with columns derived from them: dates,
  date parts, month flags, "January 2017" labels) or a table of consecutive numbers only, that
  no declared foreign key links to the data. Told by structure and values, never by name;
  nothing is asked about them, nor are they the subject of a task.
- References told by values (:func:`value_references`): an integer column whose values are a
  sparse set (spread over at least three times as many numbers as it holds, >= 10 of them) all
  found in another table's unique integer key (a country's capital, a city id) is marked as a
  key part, so its role is ``identifier`` whatever its name says (``hauptstadt`` is no amount to
  average): a name in another language or a cryptic one does not make a reference a measure.
- Tables that are no subject (:func:`subjectless_tables`, the lake's ``non_subjects``): a link
  table (at least two key or foreign-key columns and nothing else but timestamps the database
  keeps: ``film_category`` = ``film_id``, ``category_id``, ``last_update``) or a mirror (its
  column names are a subset of another table's, they share a column unique in both, and every
  one of its rows, up to :data:`MIRROR_CHECK_ROWS`, is found in that table with the same values:
  ``film_text`` = ``film``'s id, title, description). They stay in ``tables`` and in join paths;
  no question or request is about them. Told by structure and values, never by name.
- :class:`DiscoveryStats` says which path ran, how many candidates LSH proposed and the time.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from datetime import date
from difflib import SequenceMatcher
from pathlib import Path

import apsw

from clarisql.envs.synth.profile import present_sql
from clarisql.envs.synth.types import (
    ColumnProfile,
    JoinPair,
    LakeProfile,
    SynthError,
    TableProfile,
    UnionPair,
    quote_ident,
)

MAX_VALUES = 100_000


@dataclass
class DiscoveryStats:
    method: str = "exact"
    columns: int = 0
    candidates: int = 0
    seconds: float = 0.0


def norm_name(name: str) -> str:
    """Lower case, letters and digits only, in any script (``Artist_ID`` -> ``artistid``,
    ``学生_编号`` -> ``学生编号``: dropping every non-ASCII letter would make all Chinese names one)."""
    return re.sub(r"[\W_]+", "", name.lower())


_KEY_SUFFIX = re.compile(r"(id|key|code|no|num|number|nr)$")
#: Words of a table name: runs of letters split at case changes (``CustomerOrders``), digits.
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _stem(name: str) -> str:
    return _KEY_SUFFIX.sub("", norm_name(name))


def name_similarity(left: ColumnProfile, right: ColumnProfile) -> float:
    """Similarity of two column names in [0, 1], key suffixes (``id``, ``code``...) set aside.

    A bare key column (``id``) takes its table's name or one word of it (``artists.id`` reads
    as ``artist``, ``customers_list.id`` as ``customer`` too); two bare keys score 0 (two
    tables' own surrogate keys, e.g. ``sales_2021.id`` and ``sales_2022.id``, do not refer to
    each other however much their values overlap).
    """
    a, b = _stem(left.name), _stem(right.name)
    if not a and not b:
        return 0.0  # two tables' own bare keys (``id`` = ``id``): no reference between them
    if not a or not b:
        # the bare key reads as its table's name, or as one word of it (``customers_list.id``
        # is a customer id); the stem of the other side is compared with each reading
        stem, table = (a, right.table) if a else (b, left.table)
        words = [norm_name(table), *(norm_name(w) for w in _WORDS.findall(table))]
        readings = [w.rstrip("s") for w in words if w.rstrip("s")]
        return max(
            (round(SequenceMatcher(None, stem, w).ratio(), 4) for w in readings), default=0.0
        )
    # ``orders.customer_name`` -> ``customers.name``: a column may carry the other table's
    # name in front of the shared column name
    readings_a = [a, *(_singular(w) + a for w in _table_words(left.table))]
    readings_b = [b, *(_singular(w) + b for w in _table_words(right.table))]
    return max(
        round(SequenceMatcher(None, x, y).ratio(), 4)
        for x, y in ((a, b), *((a, y) for y in readings_b[1:]), *((x, b) for x in readings_a[1:]))
    )


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _table_words(table: str) -> list[str]:
    return [w for w in (norm_name(w) for w in _WORDS.findall(table)) if len(w) > 1]


def _family(kind: str) -> str:
    return "num" if kind in ("integer",) else ("text" if kind in ("text", "date") else "")


def _join_candidates(
    lake: LakeProfile, declared: frozenset[tuple[str, str]] = frozenset()
) -> list[ColumnProfile]:
    """Columns that may join: informative ones with >= 3 values, and every column a declared
    foreign key names, whatever its profile (a small table's ``current_address`` holding 9
    values in 15 rows is OrQA-low-information, and still how students reach addresses)."""
    return [
        c
        for t in lake.tables
        for c in t.columns
        if _family(c.kind)
        and c.distinct <= MAX_VALUES
        and (
            (not c.low_information and c.distinct >= 3)
            or ((c.table, c.name) in declared and c.distinct >= 1)
        )
    ]


def _values(conn: apsw.Connection, c: ColumnProfile) -> frozenset[str]:
    q = (
        f"SELECT DISTINCT TRIM(CAST({c.ref()} AS TEXT)) FROM {quote_ident(c.table)} "
        f"WHERE {present_sql(c)} LIMIT {MAX_VALUES}"
    )
    return frozenset(r[0] for r in conn.execute(q))


def _is_unique(conn: apsw.Connection, c: ColumnProfile, values: frozenset[str]) -> bool:
    """Every present value of ``c`` occurs once (the referenced side of a key)."""
    if len(values) >= MAX_VALUES:
        return False
    q = f"SELECT COUNT(*) FROM {quote_ident(c.table)} WHERE {present_sql(c)}"
    return conn.execute(q).fetchall()[0][0] == len(values)


def _join_pair(
    lc: ColumnProfile,
    rc: ColumnProfile,
    lv: frozenset[str],
    rv: frozenset[str],
    declared: bool = False,
    min_sim: float = 0.8,
) -> JoinPair | None:
    if lc.table == rc.table or _family(lc.kind) != _family(rc.kind) or not lv:
        return None
    if lc.distinct < (1 if declared else 3):
        return None
    keyness = rc.distinct / max(1, round(rc.rows * (1 - rc.missing)))
    sim = 1.0 if declared else name_similarity(lc, rc)  # a declared foreign key needs no name
    if sim < min_sim:
        return None
    containment = len(lv & rv) / len(lv)
    score = 10 * (0.5 * containment + 0.25 * sim + 0.25 * min(1.0, keyness))
    return JoinPair(
        (lc.table, lc.name),
        (rc.table, rc.name),
        round(containment, 4),
        round(sim, 4),
        round(score, 3),
    )


def _one_path_per_pair(
    pairs: list[JoinPair],
    declared: set[tuple[tuple[str, str], tuple[str, str]]],
    primary: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
) -> list[JoinPair]:
    """Declared keys first; then one pair per (left table, right table): the declared one, else
    one onto the referenced table's primary key, else the best scored; the others are kept as
    its ``alternatives`` (``pairs`` come sorted best first)."""
    declared_tables = {(a[0], b[0]) for a, b in declared}
    declared_tables |= {(b, a) for a, b in declared_tables}
    best: dict[tuple[str, str], JoinPair] = {}
    alts: dict[tuple[str, str], list] = {}
    rank = lambda p: ((p.left, p.right) not in declared, p.right not in primary)  # noqa: E731
    for p in sorted(pairs, key=rank):  # (stable: best scored first within a rank)
        tables = (p.left[0], p.right[0])
        if tables in declared_tables and (p.left, p.right) not in declared:
            continue  # the schema declares how these tables join: nothing else is inferred
        if tables not in best:
            best[tables] = p
            alts[tables] = []
        else:
            alts[tables].append((p.left, p.right))
    kept = [replace(p, alternatives=tuple(alts[t])) for t, p in best.items()]
    return sorted(kept, key=lambda p: (-p.score, p.left, p.right))


def find_joins(
    lake: LakeProfile,
    min_containment: float = 0.8,
    min_score: float = 5.0,
    exact_limit: int = 400,
    stats: DiscoveryStats | None = None,
    min_name_similarity: float = 0.8,
) -> list[JoinPair]:
    """Joinable pairs (see the module docstring)."""
    stats = stats or DiscoveryStats()
    conn = apsw.Connection(
        f"file:{Path(lake.db_path)}?mode=ro",
        flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
    )
    try:
        keyed = frozenset(x for pair in _foreign_keys(conn, lake) for x in pair)
        cols = _join_candidates(lake, keyed)
        stats.columns = len(cols)
        values = [_values(conn, c) for c in cols]
        unique = [_is_unique(conn, c, v) for c, v in zip(cols, values)]
        primary = _primary_keys(conn, lake)
        at = {(c.table, c.name): i for i, c in enumerate(cols)}
        fks = {
            (at[a], at[b]) for a, b in _foreign_keys(conn, lake) if a in at and b in at and a != b
        }
    finally:
        conn.close()
    if len(cols) <= exact_limit:
        stats.method = "exact"
        pairs = [(i, j) for i in range(len(cols)) for j in range(len(cols)) if i != j]
    else:
        stats.method = "lsh-ensemble"
        pairs = sorted(set(_lsh_pairs(values, min_containment)) | fks)
    stats.candidates = len(pairs)
    out = []
    for i, j in pairs:
        if not unique[j]:
            continue
        p = _join_pair(
            cols[i],
            cols[j],
            values[i],
            values[j],
            declared=(i, j) in fks,
            min_sim=min_name_similarity,
        )
        if p is not None and p.containment >= min_containment and p.score >= min_score:
            out.append(p)
    out.sort(key=lambda p: (-p.score, p.left, p.right))
    declared = {((cols[i].table, cols[i].name), (cols[j].table, cols[j].name)) for i, j in fks}
    return _one_path_per_pair(out, declared, primary)


def _foreign_keys(
    conn: apsw.Connection, lake: LakeProfile
) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Single-column foreign keys the schema declares: ``((table, column), (table, column))``
    (a key naming no column refers to the parent's primary key)."""
    out = []
    for t in lake.tables:
        q = f"PRAGMA foreign_key_list({quote_ident(t.name)})"
        rows = conn.execute(q).fetchall()
        ids = [r[0] for r in rows]
        for _, _, parent, src, dst, *_ in (r for r in rows if ids.count(r[0]) == 1):
            if dst is None:
                pk = [r for r in conn.execute(f"PRAGMA table_info({quote_ident(parent)})") if r[5]]
                dst = pk[0][1] if len(pk) == 1 else None
            if dst is not None:
                out.append(((t.name, src), (parent, dst)))
    return out


def _primary_keys(conn: apsw.Connection, lake: LakeProfile) -> set[tuple[str, str]]:
    """Single-column primary keys the schema declares."""
    out = set()
    for t in lake.tables:
        pk = [r[1] for r in conn.execute(f"PRAGMA table_info({quote_ident(t.name)})") if r[5]]
        if len(pk) == 1:
            out.add((t.name, pk[0]))
    return out


def _lsh_pairs(values: list[frozenset[str]], threshold: float) -> list[tuple[int, int]]:
    try:
        from datasketch import MinHash, MinHashLSHEnsemble
    except ImportError:  # pragma: no cover - depends on the installation
        raise SynthError(
            "discovery over a large lake needs datasketch: pip install 'clarisql[synth]'"
        ) from None
    num_perm = 64
    hashes = MinHash.bulk([[v.encode() for v in sorted(vs)] for vs in values], num_perm=num_perm)
    index = MinHashLSHEnsemble(threshold=threshold, num_perm=num_perm, num_part=16)
    index.index((i, h, len(vs)) for i, (h, vs) in enumerate(zip(hashes, values)) if vs)
    pairs = set()
    for i, (h, vs) in enumerate(zip(hashes, values)):
        if not vs:
            continue
        for j in index.query(h, len(vs)):
            if j != i:
                pairs.add((i, j))
    return sorted(pairs)


def _union_pair(a: TableProfile, b: TableProfile) -> UnionPair | None:
    bcols = {norm_name(c.name): c for c in b.columns}
    mapping = []
    overlaps = []
    used: set[str] = set()
    for c in a.columns:
        d = bcols.get(norm_name(c.name))
        if d is None or (c.kind != d.kind and {c.kind, d.kind} != {"integer", "real"}):
            continue
        if d.name in used:  # one to one: "order date" and "order_date" do not share a column
            continue
        used.add(d.name)
        mapping.append((c.name, d.name))
        if c.kind == "text":
            sa, sb = set(c.samples), set(d.samples)
            overlaps.append(len(sa & sb) / len(sa | sb) if sa | sb else 0.0)
    overlap = min(len(mapping) / len(a.columns), len(mapping) / len(b.columns))
    if not mapping or overlap < 0.8 or len(mapping) < 2:
        return None
    value = sum(overlaps) / len(overlaps) if overlaps else 1.0
    score = round(10 * (0.6 * overlap + 0.4 * value), 3)
    return UnionPair(a.name, b.name, tuple(mapping), score)


def find_unions(lake: LakeProfile, min_score: float = 5.0) -> list[UnionPair]:
    """Unionable table pairs (``left < right`` by name; see the module docstring)."""
    tables = sorted(lake.tables, key=lambda t: t.name)
    # Cheap pre-filter by the set of normalised column names: pairs whose name sets overlap by
    # less than 80 % cannot map 80 % of their columns.
    names = [{norm_name(c.name) for c in t.columns} for t in tables]
    out = []
    for i, a in enumerate(tables):
        for j in range(i + 1, len(tables)):
            inter = len(names[i] & names[j])
            if inter < 0.8 * max(len(names[i]), len(names[j])):
                continue
            p = _union_pair(a, tables[j])
            if p is not None and p.score >= min_score:
                out.append(p)
    return sorted(out, key=lambda p: (-p.score, p.left, p.right))


def discover(
    lake: LakeProfile, exact_limit: int = 400, stats: DiscoveryStats | None = None
) -> LakeProfile:
    """``lake`` with its joinable and unionable pairs (offline scores)."""
    stats = stats if stats is not None else DiscoveryStats()
    t0 = time.perf_counter()
    helpers = set(helper_tables(lake))
    if helpers and len(helpers) < len(lake.tables):
        lake = replace(
            lake,
            tables=tuple(t for t in lake.tables if t.name not in helpers),
            helpers=lake.helpers + tuple(t for t in lake.tables if t.name in helpers),
        )
    refs = set(value_references(lake))
    if refs:
        lake = replace(
            lake,
            tables=tuple(
                replace(
                    t,
                    columns=tuple(
                        replace(c, key_part=True) if (t.name, c.name) in refs else c
                        for c in t.columns
                    ),
                )
                for t in lake.tables
            ),
        )
    joins = find_joins(lake, exact_limit=exact_limit, stats=stats)
    unions = find_unions(lake)
    non_subjects = tuple(subjectless_tables(replace(lake, joins=tuple(joins))))
    stats.seconds = time.perf_counter() - t0
    return replace(lake, joins=tuple(joins), unions=tuple(unions), non_subjects=non_subjects)


#: rows of a candidate mirror table compared with the table it copies (the first ones by rowid)
MIRROR_CHECK_ROWS = 5000
_KEYISH = re.compile(r"(?:^|_)id$|[a-z0-9]Id$|^id_", re.I)
_KEPT_TIME = re.compile(r"^(?:last_?)?(?:update|modif|modified|changed|created)", re.I)


def _timestamp(c: ColumnProfile) -> bool:
    """A time the database keeps by itself (``last_update``, ``created_at``), not a fact."""
    from clarisql.envs.state.digest import DEFAULT_VOLATILE_COLUMNS

    return c.name.lower() in DEFAULT_VOLATILE_COLUMNS or bool(
        c.kind == "date" and _KEPT_TIME.search(c.name)
    )


def _is_link(
    t: TableProfile, joins: tuple[JoinPair, ...], declared: set[str], referred: bool
) -> bool:
    """At least two columns refer to other tables (a declared foreign key, ``declared``, or a
    discovered join), and every other column is a timestamp the database keeps or one unique
    id of its own that no other table refers to (``inventory`` = film, store and an
    ``inventory_id`` that rentals refer to: an entity, not a link)."""
    refs = declared | {j.left[1] for j in joins if j.left[0] == t.name and j.right[0] != t.name}
    rest = [c for c in t.columns if c.name not in refs and not _timestamp(c)]
    if len(t.columns) - len(rest) - sum(_timestamp(c) for c in t.columns) < 2:
        return False
    if not rest:
        return True
    if len(rest) > 1 or not (rest[0].unique and _KEYISH.search(rest[0].name)):
        return False
    return not referred and not any(j.right == (t.name, rest[0].name) for j in joins)


def subjectless_tables(lake: LakeProfile) -> list[str]:
    """The link and mirror tables of ``lake`` (see the module docstring), in table order."""
    conn = apsw.Connection(
        f"file:{Path(lake.db_path)}?mode=ro",
        flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
    )
    try:
        fks = {
            t.name: list(conn.execute(f"PRAGMA foreign_key_list({quote_ident(t.name)})"))
            for t in lake.tables
        }
        referred = {r[2].casefold() for t, rs in fks.items() for r in rs if r[2] != t}
        out = [
            t.name
            for t in lake.tables
            if t.rows > 0
            and _is_link(t, lake.joins, {r[3] for r in fks[t.name]}, t.name.casefold() in referred)
        ]
        for t in lake.tables:
            if t.name in out or t.rows == 0 or len(t.columns) < 2:
                continue
            names = {c.name.lower(): c for c in t.columns}
            for o in lake.tables:
                if o.name == t.name or o.name in out:
                    continue
                theirs = {c.name.lower(): c for c in o.columns}
                if not set(names) <= set(theirs):
                    continue
                smaller = t.rows < o.rows or (t.rows == o.rows and t.name > o.name)
                if len(theirs) == len(names) and not smaller:
                    continue  # two copies: the larger (then the first by name) stays a subject
                if not any(c.unique and theirs[n].unique for n, c in names.items()):
                    continue
                if _copied(conn, t, o, names, theirs):
                    out.append(t.name)
                    break
        return out
    finally:
        conn.close()


def _copied(
    conn: apsw.Connection, t: TableProfile, o: TableProfile, mine: dict, theirs: dict
) -> bool:
    """Every row of ``t`` (the first :data:`MIRROR_CHECK_ROWS`) is in ``o`` with the same values."""
    same = " AND ".join(
        f"o.{quote_ident(theirs[n].name)} IS t.{quote_ident(c.name)}" for n, c in mine.items()
    )
    sql = (
        f"SELECT COUNT(*) FROM (SELECT * FROM {quote_ident(t.name)} LIMIT {MIRROR_CHECK_ROWS}) AS t "
        f"WHERE NOT EXISTS (SELECT 1 FROM {quote_ident(o.name)} AS o WHERE {same})"
    )
    try:
        return next(iter(conn.execute(sql)))[0] == 0
    except apsw.Error:
        return False


_STEP_DAYS = (1, 7)


def _progression(conn: apsw.Connection, c: ColumnProfile) -> bool:
    """Whether ``c`` counts through a sequence with no gap: consecutive integers, or dates a day,
    a week or a month apart (every row one step, no repeat, no missing value)."""
    if not c.unique or c.rows < 5:
        return False
    t, q = quote_ident(c.table), quote_ident(c.name)
    if c.kind == "integer":
        return isinstance(c.min, int) and isinstance(c.max, int) and c.max - c.min == c.rows - 1
    if c.kind != "date":
        return False
    row = conn.execute(
        f"SELECT MIN(julianday({q})), MAX(julianday({q})), COUNT(julianday({q})), "
        f"COUNT(DISTINCT strftime('%Y-%m', {q})), COUNT(DISTINCT strftime('%d', {q})), "
        f"MIN(strftime('%Y', {q}) * 12 + strftime('%m', {q})), "
        f"MAX(strftime('%Y', {q}) * 12 + strftime('%m', {q})) FROM {t}"
    ).fetchone()
    lo, hi, n, months, days, m_lo, m_hi = row
    if lo is None or n != c.rows:
        return False
    if any(abs((hi - lo) - step * (n - 1)) < 1e-6 for step in _STEP_DAYS):
        return True
    return months == n and days == 1 and m_hi - m_lo == n - 1


_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december")  # fmt: skip
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MAX_HELPER_ROWS = 50_000


def _day(v: object) -> date | None:
    try:
        return date.fromisoformat(str(v)[:10])
    except ValueError:
        return None


def _parts(d: date) -> set[object]:
    """What a calendar derives from one day: its date parts as numbers and words."""
    month, wd = _MONTH_NAMES[d.month - 1], _DAY_NAMES[d.weekday()]
    return {
        d.year, d.month, d.day, d.isoweekday(), d.weekday(), (d.month - 1) // 3 + 1,
        d.isocalendar()[1], d.timetuple().tm_yday, int(d.strftime("%W")),
        month, month[:3], wd, wd[:3], str(d.year),
    }  # fmt: skip


def _derived(c: ColumnProfile, values: list[object], days: list[date | None]) -> bool:
    """Whether a calendar derives column ``c`` from its days: a date, a clock time or a flag
    (``January`` 0/1) by role, or on every row a part of that row's day (the year, the month
    number, the weekday) or a label holding one (``January 2017``, ``Mon``)."""
    from clarisql.envs.synth.column_roles import column_role

    if column_role(c) in ("date", "time", "flag"):
        return True
    for v, d in zip(values, days, strict=True):
        if v is None:
            continue
        if d is None:
            return False
        parts = _parts(d)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if v not in parts:
                return False
        elif not set(re.findall(r"\w+", str(v).casefold())) & {str(p) for p in parts}:
            return False
    return True


def _calendar(
    conn: apsw.Connection, t: TableProfile, day: ColumnProfile, rest: list[ColumnProfile]
) -> bool:
    """Whether every column of ``rest`` is derived from the days in ``day`` (row by row)."""
    cols = ", ".join(quote_ident(c.name) for c in [day, *rest])
    rows = conn.execute(f"SELECT {cols} FROM {quote_ident(t.name)}").fetchall()
    days = [_day(r[0]) for r in rows]
    return all(_derived(c, [r[i] for r in rows], days) for i, c in enumerate(rest, 1))


def value_references(lake: LakeProfile) -> list[tuple[str, str]]:
    """``(table, column)`` of the integer columns that refer to another table's unique integer
    key by their values (see the module docstring)."""
    cands = [
        c
        for t in lake.tables
        for c in t.columns
        if c.kind == "integer"
        and not c.unique
        and not c.key_part
        and not c.needs_cast
        and c.distinct >= 10
        and isinstance(c.min, int)
        and isinstance(c.max, int)
        and c.max - c.min + 1 >= 3 * c.distinct
    ]
    keys = [
        c
        for t in lake.tables
        for c in t.columns
        if c.kind == "integer" and c.unique and not c.needs_cast and c.rows >= 10
    ]
    if not cands or not keys:
        return []
    conn = apsw.Connection(
        f"file:{Path(lake.db_path)}?mode=ro",
        flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
    )
    try:
        key_values = {(k.table, k.name): _values(conn, k) for k in keys}
        out = []
        for c in cands:
            vals = _values(conn, c)
            for k in keys:
                kv = key_values[(k.table, k.name)]
                if k.table != c.table and len(kv) >= len(vals) and vals <= kv:
                    out.append((c.table, c.name))
                    break
        return out
    finally:
        conn.close()


def helper_tables(lake: LakeProfile) -> list[str]:
    """The lake's helper tables (see the module docstring): calendars and number sequences.

    A table is one when no declared foreign key leads from or to it, and either it counts days,
    weeks or months without a gap (a date column, :func:`_progression`) and every other column
    is derived from the dates (:func:`_derived`) or counts too, or every column of it is a run of
    consecutive integers (``1, 2, ..., 60``). A data table always has some column that is
    neither: an amount, a name, a category, a key into another table.
    """
    conn = apsw.Connection(
        f"file:{Path(lake.db_path)}?mode=ro",
        flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
    )
    try:
        linked = set()
        for t in lake.tables:
            for r in conn.execute(f"PRAGMA foreign_key_list({quote_ident(t.name)})"):
                linked |= {t.name, r[2]}
        out = []
        for t in lake.tables:
            if t.name in linked or t.rows < 5 or not t.columns:
                continue
            counts = {c.name for c in t.columns if _progression(conn, c)}
            if not counts:
                continue
            rest = [c for c in t.columns if c.name not in counts]
            dated = [t.column(n) for n in counts if t.column(n).kind == "date"]
            if not rest and not dated:
                out.append(t.name)  # consecutive numbers and nothing else
            elif dated and t.rows <= MAX_HELPER_ROWS and _calendar(conn, t, dated[0], rest):
                out.append(t.name)
        return out
    finally:
        conn.close()


__all__ = [
    "DiscoveryStats",
    "discover",
    "helper_tables",
    "subjectless_tables",
    "value_references",
    "index_lake",
    "find_joins",
    "find_unions",
    "name_similarity",
    "norm_name",
]


def index_lake(lake: LakeProfile, min_rows: int = 5000) -> list[str]:
    """Create indexes on the lake's join columns and on the categorical columns of large tables.

    The lake database is synthesis output (ingested or copied), so indexing it is safe: indexes
    are not state (the final-state digest covers table rows only) and they keep joins and
    filtered gold queries within the sandbox's time budget on large lakes (an unindexed join of
    two 100k-row tables takes seconds). Returns the names of the indexes created.
    """
    cols: set[tuple[str, str]] = set()
    for j in lake.joins:
        cols.add(j.left)
        cols.add(j.right)
    for t in lake.tables:
        if t.rows < min_rows:
            continue
        for c in t.usable():
            if 2 <= c.distinct <= 1000 or c.unique:
                cols.add((t.name, c.name))
    made = []
    conn = apsw.Connection(str(lake.db_path))
    try:
        with conn:
            for table, col in sorted(cols):
                if lake.table(table).rows < 1000:
                    continue
                name = "synth_idx_" + re.sub(r"\W+", "_", f"{table}_{col}").lower()
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {quote_ident(name)} "
                    f"ON {quote_ident(table)} ({quote_ident(col)})"
                )
                made.append(name)
        conn.execute("ANALYZE")
    finally:
        conn.close()
    return made
