"""Withheld columns (:mod:`clarisql.envs.synth.withhold`): the database decides what is absent.

- Columns are dropped from the suite's copy of the data (never the source), their values gone
  from every page of the file, and column-related requests ask for them in the words the
  answerable twins use for the table's other columns; their twins are well-specified tasks.
- Never withheld: a key or join column, what names the rows, a total over other rows (a query
  would still compute it), a column an index needs, an attribute another column may hold.
- ``withhold=0`` leaves the data whole and asks no withheld column; the same seed withholds the
  same columns.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.synth.withhold import eligible, withhold
from clarisql.envs.tasks import load_tasks

SCHEMA = """
CREATE TABLE artist (artist_id INTEGER PRIMARY KEY, name TEXT, phone TEXT, origin TEXT);
CREATE TABLE album (album_id INTEGER PRIMARY KEY, title TEXT,
                    artist_id INTEGER REFERENCES artist(artist_id), label TEXT,
                    label_phone TEXT, format TEXT);
CREATE TABLE track (track_id INTEGER PRIMARY KEY, name TEXT,
                    album_id INTEGER REFERENCES album(album_id), composer TEXT,
                    milliseconds INTEGER, bytes INTEGER, mood TEXT, tempo INTEGER);
CREATE INDEX track_bytes ON track(bytes);
CREATE TABLE invoice (invoice_id INTEGER PRIMARY KEY, invoice_date TEXT, total REAL);
CREATE TABLE invoice_line (invoice_line_id INTEGER PRIMARY KEY,
                           invoice_id INTEGER REFERENCES invoice(invoice_id),
                           track_id INTEGER REFERENCES track(track_id),
                           unit_price REAL, quantity INTEGER);
"""
MOODS = ("calm", "bright", "dark", "wild", "soft")
LABELS = ("Northwind", "Southgate", "Eastline", "Westmark")


def _db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for a in range(1, 13):
        conn.execute(
            "INSERT INTO artist VALUES (?, ?, ?, ?)",
            (a, f"Artist{a} Vale", f"555-01{a:02d}", LABELS[a % 4] + " Town"),
        )
    for al in range(1, 41):
        conn.execute(
            "INSERT INTO album VALUES (?, ?, ?, ?, ?, ?)",
            (
                al,
                f"Album Title {al}",
                1 + al % 12,
                LABELS[al % 4],
                f"555-02{al % 4}0",
                ("CD", "LP", "tape")[al % 3],
            ),
        )
    for t in range(1, 301):
        conn.execute(
            "INSERT INTO track VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                t,
                f"Song Number {t}",
                1 + t % 40,
                f"Qzxcomposer{t % 37}",
                180000 + 997 * t,
                4000000 + 7919 * t,
                MOODS[t % 5],
                60 + t % 90,
            ),
        )
    for i in range(1, 81):
        lines = [
            (1 + (i * 7 + k) % 300, 0.99 if k % 2 else 1.99, 1 + k % 2) for k in range(1 + i % 4)
        ]
        conn.execute(
            "INSERT INTO invoice VALUES (?, ?, ?)",
            (
                i,
                f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
                round(sum(p * q for _, p, q in lines), 2),
            ),
        )
        for tr, p, q in lines:
            conn.execute(
                "INSERT INTO invoice_line (invoice_id, track_id, unit_price, quantity) "
                "VALUES (?, ?, ?, ?)",
                (i, tr, p, q),
            )
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="module")
def src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _db(tmp_path_factory.mktemp("withhold") / "music.sqlite")


@pytest.fixture(scope="module")
def made(src: Path, tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("CLARISQL_SYNTH_EMBEDDER", "hashing")
    try:
        out = tmp_path_factory.mktemp("suite")
        return synthesize(SynthConfig([src], out, tasks=150, seed=0, withhold=10))
    finally:
        mp.undo()


def _columns(db: Path, table: str) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
    finally:
        conn.close()


def test_only_columns_whose_absence_the_schema_decides_are_eligible(
    src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLARISQL_SYNTH_EMBEDDER", "hashing")
    lake = discover(profile_lake(src))
    v = Verifier(src)
    try:
        groups = eligible(lake, v)
    finally:
        v.close()
    got = {(t.name, c.name): w for _, members in groups for t, c, w in members}
    assert got.get(("track", "composer")) == "composer"
    assert got.get(("track", "mood")) == "mood"
    for never in [
        ("track", "name"),  # names the rows
        ("album", "title"),
        ("track", "album_id"),  # a key
        ("invoice", "total"),  # the sum of its lines: a query still computes it
        ("invoice_line", "unit_price"),  # a term of that total
        ("artist", "name"),
    ]:
        assert never not in got, never
    # every column that may hold an attribute goes with it: the artist's and the label's
    # phone together (each table still names its rows and keeps a column to ask)
    phone = [m for a, m in groups if a == "phone"]
    assert phone and {(t.name, c.name) for t, c, _ in phone[0]} == {
        ("artist", "phone"),
        ("album", "label_phone"),
    }


def test_withheld_columns_are_gone_from_the_suite_s_data_only(src: Path, made) -> None:
    withheld = made.lake.withheld
    assert withheld, "no column withheld"
    lake_db = made.db_path
    assert ("track", "bytes") not in {(t, c) for t, c, _ in withheld}  # (an index needs it)
    assert ("invoice", "total") not in {(t, c) for t, c, _ in withheld}
    per_table: dict[str, int] = {}
    for table, col, _ in withheld:
        assert col not in _columns(lake_db, table)
        assert col in _columns(src, table)  # the source keeps it
        assert col not in {c.name for c in made.lake.table(table).columns}
        per_table[table] = per_table.get(table, 0) + 1
    assert max(per_table.values()) <= 2  # spread over the tables
    if ("track", "composer") in {(t, c) for t, c, _ in withheld}:
        assert b"Qzxcomposer" not in lake_db.read_bytes()  # no free page keeps a value
    assert "Withheld:" in made.card_path.read_text()


def test_column_related_requests_ask_withheld_columns_with_twins(made) -> None:
    tasks = load_tasks(made.tasks_path)
    asked = [t for t in tasks if t.metadata.get("withheld")]
    assert asked, "no request asks a withheld column"
    words = {f"{t}.{c}": w for t, c, w in made.lake.withheld}
    pairs = {t.metadata["pair"]: t for t in tasks if t.answerable and "pair" in t.metadata}
    twinned = 0
    for t in asked:
        assert t.unanswerable_kind == "column-related"
        assert t.metadata["requested"] == words[t.metadata["withheld"]]
        assert words[t.metadata["withheld"]] in t.utterance
        twin = pairs.get(t.metadata.get("pair", ""))
        if twin is not None:  # the same frame and record, a column the table still has
            twinned += 1
            assert twin.category == "well-specified"
            said = set(re.findall(r"\w+", t.utterance)) - set(re.findall(r"\w+", twin.utterance))
            assert said <= set(words[t.metadata["withheld"]].split())
    assert twinned >= 1  # the answerable twin is in the suite
    per = {k: sum(t.metadata["withheld"] == k for t in asked) for k in words}
    assert max(per.values()) <= 4


def test_withhold_zero_keeps_the_data_and_the_seed_decides(
    src: Path, made, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLARISQL_SYNTH_EMBEDDER", "hashing")
    none = synthesize(SynthConfig([src], tmp_path / "none", tasks=150, seed=0, withhold=0))
    assert none.lake.withheld == ()
    assert _columns(none.db_path, "track") == _columns(src, "track")
    assert not any(t.metadata.get("withheld") for t in load_tasks(none.tasks_path))
    again = synthesize(SynthConfig([src], tmp_path / "again", tasks=150, seed=0, withhold=10))
    assert again.lake.withheld == made.lake.withheld
    assert again.tasks_path.read_bytes() == made.tasks_path.read_bytes()


def test_an_index_synthesis_made_does_not_keep_a_column(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Synthesis indexes large tables' columns itself (``synth_idx_``): such an index goes with
    the column; the database's own index (``track_bytes``) keeps its column."""
    monkeypatch.setenv("CLARISQL_SYNTH_EMBEDDER", "hashing")
    db = tmp_path / "lake.sqlite"
    db.write_bytes(src.read_bytes())
    conn = sqlite3.connect(db)
    for col in ("composer", "mood", "tempo"):
        conn.execute(f"CREATE INDEX synth_idx_track_{col} ON track ({col})")
    conn.commit()
    conn.close()
    lake = withhold(discover(profile_lake(db)), db, 20, seed=0)
    got = {(t, c) for t, c, _ in lake.withheld}
    assert {("track", "composer"), ("track", "mood"), ("track", "tempo")} & got
    assert ("track", "bytes") not in got
    conn = sqlite3.connect(db)
    try:
        left = {r[1] for r in conn.execute("PRAGMA index_list(track)")}
    finally:
        conn.close()
    assert "track_bytes" in left
    for _, col in got:
        assert f"synth_idx_track_{col}" not in left
