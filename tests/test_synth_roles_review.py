"""Column roles from a hand review: a column of joined items is a list (never a category to
group or filter by equality), and a rate or price is averaged, never summed. The audit counts
both when planted, and a synthesized suite has neither."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.audit import audit_folder, audit_tasks
from clarisql.envs.synth.column_roles import agg_names, column_role, summable
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

PROSE = (
    "a",
    "fateful",
    "display",
    "of",
    "the",
    "dentist",
    "who",
    "must",
    "redeem",
    "boat",
    "in",
    "ancient",
    "india",
    "astounding",
    "drama",
    "cat",
    "and",
    "moose",
    "chase",
)
FEATURES = ("Trailers", "Commentaries", "Deleted Scenes", "Behind the Scenes")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("roles") / "films.sqlite"
    rng = random.Random(2)
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE film (film_id INTEGER PRIMARY KEY, title TEXT, special_features TEXT, "
        "rental_rate REAL, length INTEGER, rating TEXT, tags TEXT, rental_duration INTEGER, "
        "description TEXT)"
    )
    words = ["Agent", "Truman", "Baby", "Hall", "Dragon", "Squad", "Party", "Knock", "Oak", "Elm"]
    for i in range(1, 301):
        feats = ",".join(sorted(rng.sample(FEATURES, rng.randint(1, 3))))
        title = f"{rng.choice(words)} {rng.choice(words)} {i}"
        conn.execute(
            "INSERT INTO film VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (i, title, feats, rng.choice([0.99, 2.99, 4.99]) + rng.choice([0, 1, 2]),
             rng.randint(46, 185), rng.choice(["G", "PG", "PG-13", "R", "NC-17"]),
             f"{rng.choice(words)}, {rng.randint(1, 999)} Main Street", rng.randint(3, 7),
             " ".join(rng.choice(PROSE) for _ in range(14)) + "."),
        )  # fmt: skip
    conn.commit()
    conn.close()
    return path


def test_roles(db: Path) -> None:
    t = profile_lake(db).table("film")
    assert column_role(t.column("special_features")) == "list"
    assert column_role(t.column("rating")) == "category"
    assert column_role(t.column("tags")) != "list"  # commas, but no vocabulary that recombines
    assert not summable(t.column("rental_rate")) and "sum" not in agg_names(t.column("rental_rate"))
    assert summable(t.column("length"))


def test_suite_and_planted_cases(db: Path, tmp_path: Path) -> None:
    res = synthesize(SynthConfig(sources=[db], out=tmp_path / "s", tasks=120, seed=3))
    report, tasks = audit_folder(res.tasks_path.parent)
    for flaw in ("aggregate-over-non-measure", "list-column-as-category"):
        assert report.total(flaw) == 0, report.examples[flaw]
    text = res.tasks_path.read_text(encoding="utf-8")
    assert 'SUM(\\"rental_rate\\")' not in text and 'SUM(CAST(\\"rental_rate\\"' not in text
    for t in tasks:  # no "all ties" ranking over a measure of five values, no paragraph as a name
        assert not (t.gold_sql and "RANK()" in t.gold_sql and "rental_duration" in t.gold_sql)
        assert not (t.gold_sql and '"description" = ' in t.gold_sql), t.utterance
    assert len(tasks) > 60
    planted = [
        Task(id="p1", db="x", utterance="Total rental rate per rating?",
             gold_sql='SELECT rating, SUM(rental_rate) FROM film GROUP BY rating'),
        Task(id="p2", db="x", utterance="Films per special features?",
             gold_sql="SELECT special_features, COUNT(*) FROM film GROUP BY special_features"),
        Task(id="p3", db="x", utterance="Average length of films with trailers?",
             gold_sql="SELECT AVG(length) FROM film WHERE special_features = 'Trailers'"),
        Task(id="p4", db="x", utterance="Total length per rating?",
             gold_sql="SELECT rating, SUM(length) FROM film GROUP BY rating"),
    ]  # fmt: skip
    v = Verifier(db)
    try:
        got = audit_tasks(planted, discover(profile_lake(db)), v)
    finally:
        v.close()
    assert got.total("aggregate-over-non-measure") == 1, got.examples
    assert got.total("list-column-as-category") == 2, got.examples


def test_text_markers_in_a_real_column_are_missing_not_the_highest(tmp_path: Path) -> None:
    """SQLite keeps '' in a REAL column as text, which sorts above every number: a ranking or
    a filter "above x" must not list it, and a new row never states it."""
    db = tmp_path / "hotels.sqlite"
    rng = random.Random(4)
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE hotels (hotel_id INTEGER PRIMARY KEY, stars TEXT, price_range REAL, "
        "notes TEXT)"
    )
    for i in range(1, 121):
        price = "" if i % 4 == 0 else round(rng.uniform(50, 900), 2)
        notes = f"note {i}"
        conn.execute(
            "INSERT INTO hotels VALUES (?, ?, ?, ?)",
            (i, rng.choice(["one", "two", "three", "four"]), price, notes),
        )
    conn.commit()
    conn.close()
    res = synthesize(SynthConfig(sources=[db], out=tmp_path / "s", tasks=120, seed=5))
    v = Verifier(res.db_path)
    try:
        golds = [t.gold_sql for t in res.tasks if t.gold_sql and "price_range" in t.gold_sql]
        assert golds
        for sql in golds:
            rows = v.rows(sql) or []
            assert not any(x == "" for r in rows for x in r), sql
    finally:
        v.close()
    inserts = [a for t in res.tasks for a in t.gold_actions if a.startswith("INSERT")]
    assert not any("''" in a for a in inserts), inserts


def test_roles_told_by_values_when_names_do_not_say(tmp_path: Path) -> None:
    """Names in another language: a capital that is a city's id (values inside another table's
    key), a year column with a few ancient years, advisor numbers of one width: none of them is
    an amount to sum or average."""
    from clarisql.envs.synth.discover import value_references

    db = tmp_path / "welt.sqlite"
    rng = random.Random(6)
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE stadt (id INTEGER PRIMARY KEY, name TEXT, bevoelkerung INTEGER);"
        "CREATE TABLE land (code TEXT PRIMARY KEY, hauptstadt INTEGER, unabh_jahr INTEGER, "
        "flaeche REAL, berater INTEGER);"
    )
    for i in range(1, 1001):
        conn.execute(
            "INSERT INTO stadt VALUES (?, ?, ?)", (i, f"Stadt {i}", rng.randint(1, 400) * 1000)
        )
    advisors = [rng.randint(1000, 9999) for _ in range(12)]
    for k in range(60):
        year = -1523 if k == 0 else rng.randint(1800, 1994)
        conn.execute(
            "INSERT INTO land VALUES (?, ?, ?, ?, ?)",
            (f"L{k:02d}", rng.randint(1, 1000), year, round(rng.uniform(1, 9e6), 1),
             rng.choice(advisors)),
        )  # fmt: skip
    conn.commit()
    conn.close()
    lake = profile_lake(db)
    assert value_references(lake) == [("land", "hauptstadt")]
    land = discover(lake).table("land")
    assert column_role(land.column("hauptstadt")) == "identifier"
    assert column_role(land.column("unabh_jahr")) == "date"
    assert column_role(land.column("berater")) == "code"
    assert column_role(land.column("flaeche")) == "measure"
    assert column_role(discover(lake).table("stadt").column("bevoelkerung")) == "measure"


def test_a_member_list_is_judged_in_the_task_s_own_table(tmp_path: Path) -> None:
    """A slot name two tables share (``name``): the artists' names read as credit lists, the
    tracks' do not, so a track's title with a comma is no member list; an artist's is."""
    db = tmp_path / "music.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE artist (artist_id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("CREATE TABLE track (track_id INTEGER PRIMARY KEY, name TEXT, artist_id INT)")
    first = ["Bill", "Mike", "Roddy", "Jim", "Ann", "Joe", "Sue", "Kim"]
    last = ["Gould", "Bordin", "Patton", "Bottum", "Lee", "Ray", "Fox", "Hart"]
    rng = random.Random(1)
    for i in range(1, 121):
        a, b, c = (f"{rng.choice(first)} {rng.choice(last)}" for _ in range(3))
        conn.execute("INSERT INTO artist VALUES (?, ?)", (i, a if i % 3 == 0 else f"{a}/{b}/{c}"))
        conn.execute(
            "INSERT INTO track VALUES (?, ?, ?)", (i, f"Requiem, Op. {i}: {i % 7}. Pie Jesu", i)
        )
    conn.commit()
    conn.close()

    def asked(table: str, value: str) -> Task:
        return Task(
            id=table, db="x", utterance=f'How many rows have name "{value[:4]}"?',
            gold_sql=f"SELECT {table}_id FROM {table} WHERE {table}_id = 7",
            underspecs=[Underspec(Label("not-exist", value[:4], "name"), value)],
            metadata={"tables": [table]},
        )  # fmt: skip

    v = Verifier(db)
    try:
        lake = discover(profile_lake(db))
        track = audit_tasks([asked("track", "Requiem, Op. 5: 5. Pie Jesu")], lake, v)
        artist = audit_tasks([asked("artist", "Bill Gould/Mike Bordin/Mike Patton")], lake, v)
    finally:
        v.close()
    assert track.total("list-column-as-category") == 0, track.examples
    assert artist.total("list-column-as-category") == 1, artist.examples
