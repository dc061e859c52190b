"""The fast read path of the explorers gives the same answers as the slow one:
``levenshtein`` (rapidfuzz) equals the textbook dynamic program, bound included, and the value
index (:mod:`clarisql.envs.synth.value_index`) returns exactly the rows ``reach_sql`` returns
through the verifier (same values, same order, ``None`` where it gives ``None``)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clarisql.envs.explorers import levenshtein, reach_sql
from clarisql.envs.synth.value_index import ASK_SQL, ValueIndex, ValueIndexes, fold
from clarisql.envs.synth.verify import Verifier


def _textbook(a: str, b: str, bound: int | None = None) -> int:
    """The pure-Python edit distance the explorers used before (the reference)."""
    if len(a) < len(b):
        a, b = b, a
    if bound is not None and len(a) - len(b) > bound:
        return bound + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if bound is not None and min(cur) > bound:
            return bound + 1
        prev = cur
    return prev[-1]


_TEXT = st.text(alphabet="abcAB é東京%_\\'-1", max_size=14)


@settings(max_examples=400, deadline=None)
@given(_TEXT, _TEXT, st.one_of(st.none(), st.integers(0, 5)))
def test_levenshtein_equals_the_textbook_program(a: str, b: str, bound: int | None) -> None:
    assert levenshtein(a, b, bound) == _textbook(a, b, bound)


def test_fold_is_sqlite_like_folding() -> None:
    assert fold("ÄbC東") == "Äbc東"  # only ASCII letters fold, as in SQLite's LIKE


#: values that stress LIKE's wildcards and escape, case, CJK, numbers stored as text, NULLs
_EDGE = [
    "100% cotton",
    "100 cotton",
    "a_b",
    "axb",
    "back\\slash",
    "backslash",
    "Acme Group",
    "ACME group",
    "acme",
    "Äcme",
    "äcme",
    "ÄÖÜ Gesellschaft mbH",
    "École normale supérieure",
    "東京タワー",
    "東京",
    "京都",
    "123",
    "1234",
    "12",
    "x",
    "xy",
    "",
    " ",
    "O'Brien",
    "o'brien co",
    "Riverton Metro Co., Ltd.",
    "Riverton Metro Partners Co., Ltd.",
]


def _db(tmp: Path, n_random: int = 400, seed: int = 0) -> Path:
    rng = random.Random(seed)
    path = tmp / "vi.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, code, num INTEGER, f REAL)")
    conn.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, label TEXT)")
    conn.execute("CREATE INDEX u_label ON u(label)")
    alphabet = "abcdeABCDE _%\\'東京1"
    rows = []
    for i in range(n_random):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if i % 7 == 0:
            name = None
        rows.append((name, rng.choice([*_EDGE, 12, 123, None]), rng.randint(0, 2000), i / 3))
    rows += [(v, v, len(v), 0.5) for v in _EDGE] + [(v, v, 0, 0.5) for v in _EDGE]
    rng.shuffle(rows)
    conn.executemany("INSERT INTO t (name, code, num, f) VALUES (?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO u (label) VALUES (?)", [(r[0],) for r in rows])
    conn.commit()
    conn.close()
    return path


_SURFACES = [
    "%",
    "_",
    "\\",
    "100%",
    "a_b",
    "back\\",
    "acme",
    "ACME",
    "Acme Grp",
    "äcme",
    "äöü",
    "école",
    "東京",
    "東",
    "123",
    "12",
    "1",
    "x",
    "O'Brien",
    "Riverton Co.",
    "abc",
    "ab cd",
    "zzzzzzzz",
]


def _surfaces(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abcdeABCDE _%\\'東京1"
    out = list(_SURFACES)
    while len(out) < n:
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        if s.strip():
            out.append(s)
    return out


@pytest.mark.parametrize(("table", "column"), [("t", "name"), ("t", "code"), ("u", "label")])
def test_index_reaches_what_reach_sql_reads(tmp_path: Path, table: str, column: str) -> None:
    v = Verifier(_db(tmp_path))
    idx = ValueIndex.build(v, f'"{table}"', f'"{column}"')
    assert idx is not None
    checked = 0
    for s in _surfaces(1, 300):
        want = v.rows(reach_sql(f'"{table}"', f'"{column}"', s))
        got = idx.reach(s)
        assert got is not ASK_SQL
        assert got == want, s
        checked += want is not None and len(want) > 0
    assert checked > 100  # the comparison saw real answers, not only None


def test_index_gives_none_where_the_verifier_caps_rows(tmp_path: Path) -> None:
    v = Verifier(_db(tmp_path), max_rows=5)
    idx = ValueIndex.build(v, '"t"', '"name"')
    assert idx is not None
    nones = 0
    for s in _surfaces(2, 200):
        want = v.rows(reach_sql('"t"', '"name"', s))
        assert idx.reach(s) == want, s
        nones += want is None
    assert nones > 10


def test_index_leaves_the_step_verdict_to_sqlite(tmp_path: Path) -> None:
    v = Verifier(_db(tmp_path), step_budget=2_000)  # a scan of the table exceeds it
    idx = ValueIndex.build(v, '"t"', '"name"')
    assert idx is not None
    assert idx.reach("acme") is ASK_SQL
    # and the holder then runs the statement: the verdict is SQLite's own (over budget)
    assert ValueIndexes(v).reach('"t"', '"name"', "acme") is None
    assert v.rows(reach_sql('"t"', '"name"', "acme")) is None


def test_index_declines_floats(tmp_path: Path) -> None:
    v = Verifier(_db(tmp_path))
    assert ValueIndex.build(v, '"t"', '"f"') is None  # SQLite's text of a float is its own
    holder = ValueIndexes(v)
    for s in ("0.5", "1.3", "2"):  # the holder falls back to the statement
        assert holder.reach('"t"', '"f"', s) == v.rows(reach_sql('"t"', '"f"', s))


def test_index_on_integers(tmp_path: Path) -> None:
    v = Verifier(_db(tmp_path), max_rows=2000)
    idx = ValueIndex.build(v, '"t"', '"num"')
    assert idx is not None
    for s in ("1", "12", "123", "1234", "99", "2000", "7 7"):
        assert idx.reach(s) == v.rows(reach_sql('"t"', '"num"', s)), s


def _close_values_difflib(surface: str, values: list, cutoff: float = 0.7) -> list:
    """close_values as it was: difflib over every value (the reference)."""
    import difflib

    by_text = {str(v): v for v in values}
    hits = difflib.get_close_matches(surface, sorted(by_text), n=8, cutoff=cutoff)
    return [by_text[h] for h in hits]


_WORD = st.text(alphabet="abcdeAB é東%_", min_size=0, max_size=10)


@settings(max_examples=300, deadline=None)
@given(
    _WORD,
    st.lists(st.one_of(_WORD, st.integers(0, 200)), max_size=40),
    st.sampled_from([0.5, 0.6, 0.7, 0.8]),
)
def test_close_values_equals_difflib_alone(surface: str, values: list, cutoff: float) -> None:
    from clarisql.envs.synth.layers.common import close_values

    assert close_values(surface, values, cutoff) == _close_values_difflib(surface, values, cutoff)


def test_close_values_on_names_that_tie() -> None:
    from clarisql.envs.synth.layers.common import close_values

    names = [f"City {i:03d}" for i in range(150)] + ["Cty 001", "City 01", "Citty 001"]
    for s in ("City 001", "Ciy 001", "City 1", "Cit 010", "city 001"):
        got = close_values(s, names)
        assert got == _close_values_difflib(s, names)
    assert len(close_values("City 001", names)) == 8  # many above the cutoff: n caps them


_TIGHT = st.text(alphabet="ab c", min_size=2, max_size=7)


@settings(max_examples=300, deadline=None)
@given(_TIGHT, st.lists(_TIGHT, min_size=5, max_size=60), st.sampled_from([0.5, 0.7]))
def test_close_values_with_many_ties(surface: str, values: list, cutoff: float) -> None:
    from clarisql.envs.synth.layers.common import close_values

    assert close_values(surface, values, cutoff) == _close_values_difflib(surface, values, cutoff)


@pytest.mark.parametrize(
    "distinct_sql",
    [
        'SELECT DISTINCT "name" FROM "t" WHERE "name" IS NOT NULL',
        'SELECT DISTINCT "code" FROM "t" WHERE "code" IS NOT NULL AND "num" > 100',
        'SELECT DISTINCT "label" FROM "u" WHERE UPPER(TRIM("label")) NOT IN (\'NA\', \'\')',
        'SELECT DISTINCT "f" FROM "t" WHERE "f" IS NOT NULL',
    ],
)
def test_window_slices_what_the_statement_reads(tmp_path: Path, distinct_sql: str) -> None:
    v = Verifier(_db(tmp_path))
    holder = ValueIndexes(v)
    table = distinct_sql.split(" FROM ")[1].split()[0]
    for size, offset in [(150, 0), (150, 7), (150, 300), (5, 40), (150, 10_000), (250, 0)]:
        want = v.rows(f"{distinct_sql} ORDER BY 1 LIMIT {size} OFFSET {offset}")
        assert holder.window(table, distinct_sql, size, offset) == want, (size, offset)


def test_window_leaves_the_step_verdict_to_sqlite(tmp_path: Path) -> None:
    v = Verifier(_db(tmp_path), step_budget=2_000)
    sql = 'SELECT DISTINCT "name" FROM "t" WHERE "name" IS NOT NULL'
    assert v.rows(f"{sql} ORDER BY 1 LIMIT 150 OFFSET 0") is None  # over the budget
    assert ValueIndexes(v).window('"t"', sql, 150, 0) is None


def test_close_values_on_long_texts() -> None:
    """Texts of 200+ characters switch on difflib's autojunk heuristic: still the same hits."""
    from clarisql.envs.synth.layers.common import close_values

    rng = random.Random(3)
    for _ in range(20):
        base = "".join(rng.choice("ab c") for _ in range(rng.randint(195, 230)))
        values = [
            base[: rng.randint(150, len(base))] + rng.choice(["", "x", "yy"]) for _ in range(30)
        ]
        surface = base[:100] + base[101:]
        assert close_values(surface, values, 0.5) == _close_values_difflib(surface, values, 0.5)


@given(
    st.text(alphabet="ab cAB北-", max_size=6),
    st.lists(st.one_of(st.text(alphabet="ab cAB北-", max_size=9), st.integers(0, 99)), max_size=12),
)
def test_containing_is_contains_over_a_column(surface: str, values: list) -> None:
    from clarisql.envs.explorers import containing, contains

    assert containing(surface, values) == [v for v in values if contains(surface, v)]


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.lists(st.one_of(_TEXT, st.integers(-50, 500)), max_size=12))
def test_containing_is_contains_on_each_value(surface: str, values: list) -> None:
    from clarisql.envs.explorers import containing, contains

    assert containing(surface, values) == [v for v in values if contains(surface, v)]
