"""Writes that rows pointing at the written row contradict, and dates swapped against a key they
follow: an album's title swapped while its title track keeps it, two cities' names swapped while
their addresses keep the district named as the city, two invoices' dates swapped where invoices
are numbered in date order. The consistency functions find them on the data, the audit counts
planted ones, and the write generator makes none."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.audit import audit_tasks
from clarisql.envs.synth.consistency import (
    Dependencies,
    described_by_children,
    interchangeable,
    spelled_in_children,
)
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import write_tasks
from clarisql.envs.synth.layers.writes import references
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task

WORDS = ["Rock", "Night", "River", "Stone", "Fire", "Rain", "Summer", "Ghost", "Dream", "Road"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("children") / "store.sqlite"
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE artists (artist_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE albums (album_id INTEGER PRIMARY KEY, title TEXT,
            artist_id INTEGER REFERENCES artists(artist_id));
        CREATE TABLE tracks (track_id INTEGER PRIMARY KEY, name TEXT,
            album_id INTEGER REFERENCES albums(album_id), milliseconds INTEGER);
        CREATE TABLE countries (country_id INTEGER PRIMARY KEY, country TEXT);
        CREATE TABLE cities (city_id INTEGER PRIMARY KEY, city TEXT,
            country_id INTEGER REFERENCES countries(country_id));
        CREATE TABLE addresses (address_id INTEGER PRIMARY KEY, street TEXT, district TEXT,
            city_id INTEGER REFERENCES cities(city_id));
        CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, last_name TEXT);
        CREATE TABLE invoices (invoice_id INTEGER PRIMARY KEY,
            customer_id INTEGER REFERENCES customers(customer_id), invoice_date TEXT);
        """
    )
    for a in range(1, 9):
        conn.execute("INSERT INTO artists VALUES (?, ?)", (a, f"Band {WORDS[a]}"))
    track = 0
    for al in range(1, 41):
        title = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {al}x"
        conn.execute("INSERT INTO albums VALUES (?, ?, ?)", (al, title, 1 + al % 8))
        for j in range(4):  # the first track is the title track
            track += 1
            name = title if j == 0 else f"{rng.choice(WORDS)} Song {track}"
            conn.execute(
                "INSERT INTO tracks VALUES (?, ?, ?, ?)",
                (track, name, al, rng.randint(120_000, 400_000)),
            )
    for c in range(1, 5):
        conn.execute("INSERT INTO countries VALUES (?, ?)", (c, f"Land {WORDS[c]}"))
    addr = 0
    for ci in range(1, 31):
        city = f"{WORDS[ci % 10]}ville{ci}"
        conn.execute("INSERT INTO cities VALUES (?, ?, ?)", (ci, city, 1 + ci % 4))
        for _ in range(2):  # every address lies in the district named as its city
            addr += 1
            conn.execute(
                "INSERT INTO addresses VALUES (?, ?, ?, ?)",
                (addr, f"{addr} {rng.choice(WORDS)} Street", city, ci),
            )
    for cu in range(1, 11):
        conn.execute("INSERT INTO customers VALUES (?, ?)", (cu, f"Name{WORDS[cu % 10]}"))
    for i in range(1, 121):  # numbered in date order, customers interleaved
        conn.execute(
            "INSERT INTO invoices VALUES (?, ?, ?)",
            (i, 1 + i % 10, f"2020-{1 + i // 11:02d}-{1 + i % 11 * 2:02d}"),
        )
    conn.commit()
    conn.close()
    return path


def _row(v: Verifier, t: str, k: str, kv: int) -> dict:
    cur = v.rows(f"SELECT * FROM {t} WHERE {k} = {kv}")
    names = [r[0] for r in v.rows(f"SELECT name FROM pragma_table_info('{t}')")]
    return dict(zip(names, cur[0], strict=True))


def test_children_and_key_order_found_on_the_data(db: Path) -> None:
    lake, v = discover(profile_lake(db)), Verifier(db)
    refs = references(lake, v)
    album = _row(v, "albums", "album_id", 1)
    assert spelled_in_children(v, refs, "albums", album, "title").startswith("tracks.name")
    assert described_by_children(v, refs, "albums", album) == "tracks"
    city = _row(v, "cities", "city_id", 2)
    assert spelled_in_children(v, refs, "cities", city, "city").startswith("addresses.district")
    # a track is no whole thing: no table refers to it
    assert described_by_children(v, refs, "tracks", _row(v, "tracks", "track_id", 2)) is None
    assert interchangeable("Greatest Hits [Disc 1]", "Greatest Hits [Disc 2]")
    assert not interchangeable("Let There Be Rock", "Back In Black")
    deps = Dependencies(v)
    inv = lake.table("invoices")
    assert deps.key_ordered(inv, "invoice_date") == ["invoice_id"]
    a, b = _row(v, "invoices", "invoice_id", 3), _row(v, "invoices", "invoice_id", 13)
    assert deps.swap_breaks_order(inv, a, b, "invoice_date")
    later = _row(v, "invoices", "invoice_id", 90)["invoice_date"]
    assert deps.breaks_order(inv, a, "invoice_date", later)
    assert deps.breaks_order(inv, a, "invoice_date", a["invoice_date"]) is None
    # the track length follows no key
    assert deps.key_ordered(lake.table("tracks"), "milliseconds") == []


def _w(i: int, acts: list[str]) -> Task:
    text = "Please swap them."
    return Task(
        id=f"w{i}", db="store.sqlite", utterance=text, category="write", writable=True,
        gold_actions=acts, instruction=text,
    )  # fmt: skip


def test_audit_catches_swaps_the_data_around_them_contradicts(db: Path) -> None:
    lake, v = discover(profile_lake(db)), Verifier(db)
    t1, t2 = (_row(v, "albums", "album_id", i)["title"] for i in (1, 9))
    c1, c2 = (_row(v, "cities", "city_id", i)["city"] for i in (2, 6))
    d1, d2 = (_row(v, "invoices", "invoice_id", i)["invoice_date"] for i in (3, 13))
    n1, n2 = (_row(v, "tracks", "track_id", i)["name"] for i in (2, 3))
    tasks = [
        _w(1, [f"UPDATE albums SET title = '{t2}' WHERE album_id = 1",
               f"UPDATE albums SET title = '{t1}' WHERE album_id = 9"]),
        _w(2, [f"UPDATE cities SET city = '{c2}' WHERE city_id = 2",
               f"UPDATE cities SET city = '{c1}' WHERE city_id = 6"]),
        _w(3, [f"UPDATE invoices SET invoice_date = '{d2}' WHERE invoice_id = 3",
               f"UPDATE invoices SET invoice_date = '{d1}' WHERE invoice_id = 13"]),
        # not a flaw: two tracks of one album, no row names either
        _w(4, [f"UPDATE tracks SET name = '{n2}' WHERE track_id = 2",
               f"UPDATE tracks SET name = '{n1}' WHERE track_id = 3"]),
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    flagged = {e.split(":")[0] for e in report.examples["write-leaves-row-inconsistent"]}
    assert report.total("write-leaves-row-inconsistent") == 3, report.examples
    assert not any("w4" in e for e in flagged), report.examples


def test_write_generator_makes_none_of_them(db: Path) -> None:
    lake, v = discover(profile_lake(db)), Verifier(db)
    tasks = write_tasks(lake, [], v, random.Random(1), 60)
    report = audit_tasks(tasks, lake, v)
    assert report.total("write-leaves-row-inconsistent") == 0, report.examples
    swaps = [t for t in tasks if len(t.gold_actions) == 2]
    assert swaps, "the generator still swaps where nothing contradicts it"
    assert not any("albums" in a or "cities" in a or "invoices" in a
                   for t in swaps for a in t.gold_actions), [t.gold_actions for t in swaps]  # fmt: skip
