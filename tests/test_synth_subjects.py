"""Who a synthesized question may be about, and what it may call unanswerable.

- Link tables (two foreign keys and a kept timestamp) and mirror tables (a copy of another
  table's columns and values) are told by structure and values and are never a subject.
- "When in doubt, not unanswerable": an attribute whose head noun is a column's head noun in any
  table the subject reaches through joins (any number of hops) is never asked as unanswerable,
  unless both names say which one they are and say different things (tests/test_synth_absent.py).
- The vague intent frames name the whole table in the plural.
"""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.discover import discover, subjectless_tables
from clarisql.envs.synth.layers.common import human
from clarisql.envs.synth.layers.unanswerable import _UnansGen, head_noun
from clarisql.envs.synth.phrasing import plural
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task, load_tasks

TITLES = ("Alpha", "Brave", "Cosmic", "Dusty", "Eager", "Frozen", "Golden", "Hidden", "Iron")
NOUNS = ("Road", "Night", "River", "Storm", "Garden", "Empire", "Dream")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("subjects") / "video.sqlite"
    rng = random.Random(5)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE country (country_id INTEGER PRIMARY KEY, country TEXT);
        CREATE TABLE city (city_id INTEGER PRIMARY KEY, city TEXT,
                           country_id INTEGER REFERENCES country(country_id));
        CREATE TABLE store (store_id INTEGER PRIMARY KEY, store_address TEXT,
                            city_id INTEGER REFERENCES city(city_id));
        CREATE TABLE film (film_id INTEGER PRIMARY KEY, title TEXT, description TEXT,
                           rating TEXT, length INTEGER, price REAL);
        CREATE TABLE genre (genre_id INTEGER PRIMARY KEY, genre_name TEXT);
        CREATE TABLE film_tag (film_id INTEGER REFERENCES film(film_id),
                               genre_id INTEGER REFERENCES genre(genre_id), last_update TEXT);
        CREATE TABLE film_shadow (film_id INTEGER PRIMARY KEY, title TEXT, description TEXT);
        CREATE TABLE copy (copy_id INTEGER PRIMARY KEY, film_id INTEGER REFERENCES film(film_id),
                           store_id INTEGER REFERENCES store(store_id), last_update TEXT);
        CREATE TABLE rental (rental_id INTEGER PRIMARY KEY,
                             copy_id INTEGER REFERENCES copy(copy_id),
                             rented_on TEXT, fee REAL);
        """
    )
    countries = ["Norway", "Chile", "Kenya", "Japan", "Peru", "Spain"]
    for i, c in enumerate(countries, 1):
        conn.execute("INSERT INTO country VALUES (?, ?)", (i, c))
    for i in range(1, 31):
        conn.execute("INSERT INTO city VALUES (?, ?, ?)", (i, f"Town{i:02d}", rng.randint(1, 6)))
    for i in range(1, 13):
        conn.execute(
            "INSERT INTO store VALUES (?, ?, ?)", (i, f"{i * 7} Main Street", rng.randint(1, 30))
        )
    films = []
    for i in range(1, 61):
        title = f"{TITLES[i % 9]} {NOUNS[i % 7]} {i}"
        desc = f"A {rng.choice(['quiet', 'loud', 'sad'])} story of a {rng.choice(NOUNS).lower()}"
        films.append((i, title, desc))
        conn.execute(
            "INSERT INTO film VALUES (?, ?, ?, ?, ?, ?)",
            (i, title, desc, rng.choice(["G", "PG", "R"]), rng.randint(60, 180),
             round(rng.uniform(1, 5), 2)),
        )  # fmt: skip
        conn.execute("INSERT INTO film_shadow VALUES (?, ?, ?)", (i, title, desc))
    for i, g in enumerate(["Drama", "Comedy", "Horror", "Travel", "Music"], 1):
        conn.execute("INSERT INTO genre VALUES (?, ?)", (i, g))
    for i in range(1, 61):
        conn.execute("INSERT INTO film_tag VALUES (?, ?, '2006-02-15 05:07:09')", (i, i % 5 + 1))
    for i in range(1, 201):
        conn.execute(
            "INSERT INTO copy VALUES (?, ?, ?, '2006-02-15 05:07:09')",
            (i, rng.randint(1, 60), rng.randint(1, 12)),
        )
    for i in range(1, 401):
        conn.execute(
            "INSERT INTO rental VALUES (?, ?, ?, ?)",
            (i, rng.randint(1, 200), f"2005-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
             round(rng.uniform(0.5, 9), 2)),
        )  # fmt: skip
    conn.commit()
    conn.close()
    return path


def test_link_and_mirror_tables_are_told_by_structure_and_values(db: Path) -> None:
    lake = discover(profile_lake(db))
    # copy has two foreign keys too, but rentals refer to its own id: an entity, not a link
    assert set(lake.non_subjects) == {"film_tag", "film_shadow"}
    assert set(subjectless_tables(lake)) == {"film_tag", "film_shadow"}
    assert {"film_tag", "film_shadow"} <= {t.name for t in lake.tables}  # still joinable
    assert not lake.is_subject("film_tag") and lake.is_subject("copy")


def test_a_mirror_whose_values_differ_is_a_subject(tmp_path: Path) -> None:
    path = tmp_path / "two.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE a (a_id INTEGER PRIMARY KEY, title TEXT, note TEXT);"
        "CREATE TABLE b (a_id INTEGER PRIMARY KEY, title TEXT);"
    )
    for i in range(1, 21):
        conn.execute("INSERT INTO a VALUES (?, ?, ?)", (i, f"t{i}", f"n{i}"))
        conn.execute("INSERT INTO b VALUES (?, ?)", (i, f"t{i}" if i != 7 else "other"))
    conn.commit()
    conn.close()
    assert subjectless_tables(profile_lake(path)) == []


@pytest.mark.parametrize(
    ("text", "head"),
    [("list price", "price"), ("product_price", "price"), ("address details", "address"),
     ("store_address", "address"), ("countries", "country"), ("date of birth", "birth")],
)  # fmt: skip
def test_head_noun(text: str, head: str) -> None:
    assert head_noun(text) == head


def test_an_attribute_a_join_path_may_hold_is_in_doubt(db: Path) -> None:
    lake = discover(profile_lake(db))
    v = Verifier(db)
    try:
        gen = _UnansGen(lake, v, random.Random(0))
        rental, film = lake.table("rental"), lake.table("film")
        assert gen.in_doubt(film, "list price")  # film.price
        assert gen.in_doubt(rental, "country")  # rental -> copy -> store -> city -> country
        assert gen.in_doubt(lake.table("store"), "address details")  # store.store_address
        assert not gen.in_doubt(film, "boiling point")
        # column-surface: every table reaches every other one here, so nothing is asked
        assert all(gen.column_surface() is None for _ in range(60))
    finally:
        v.close()


@pytest.fixture(scope="module")
def made(db: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("suite") / "s"
    return synthesize(SynthConfig(sources=[db], out=out, tasks=150, seed=2))


@pytest.fixture(scope="module")
def suite(made) -> list[Task]:
    return load_tasks(made.tasks_path)


def test_no_task_is_about_a_link_or_mirror_table(suite: list[Task]) -> None:
    assert len(suite) > 60
    for t in suite:
        assert not re.search(r"\b(shadows?|tags?)\b", t.utterance, re.I), t.utterance
        if not t.answerable:
            assert not {"film_tag", "film_shadow"} & set(t.metadata.get("tables", [])), t


def test_no_unanswerable_attribute_is_in_doubt(suite: list[Task], made) -> None:
    lake_db = made.db_path  # (the suite's data: withheld columns left out)
    lake = discover(profile_lake(lake_db))
    v = Verifier(lake_db)
    try:
        gen = _UnansGen(lake, v, random.Random(0))
        asked = [
            (t.metadata["tables"][0], t.metadata["requested"])
            for t in suite
            if t.metadata.get("requested")
        ]
        assert asked
        for table, attr in asked:
            assert not gen.in_doubt(lake.table(table), attr), (table, attr)
    finally:
        v.close()


def test_vague_intent_names_the_whole_table_in_the_plural(suite: list[Task]) -> None:
    vague = [
        t
        for t in suite
        if t.metadata.get("layer") == "clarify"
        and any(u.label.kind == "intent" for u in t.underspecs)
        and t.metadata.get("scope_source") != "family"
    ]
    assert vague
    for t in vague:
        table = human(t.metadata["tables"][0])
        assert f"the {plural(table)}" in t.utterance, t.utterance


def test_the_audit_counts_an_unanswerable_attribute_a_join_path_may_hold(db: Path) -> None:
    from clarisql.envs.synth.audit import audit_tasks

    lake = discover(profile_lake(db))
    planted = [
        Task(id="p1", db="x", utterance="Which country does the rental with rental ID 4 have?",
             answerable=False, unanswerable_kind="column-surface",
             category="unanswerable:column-surface",
             metadata={"tables": ["rental"], "requested": "country"}),
        Task(id="p2", db="x", utterance="What is the list price of the film 'x'?",
             answerable=False, unanswerable_kind="column-related",
             category="unanswerable:column-related",
             metadata={"tables": ["film"], "requested": "list price"}),
        Task(id="p3", db="x", utterance="What is the boiling point of the film 'x'?",
             answerable=False, unanswerable_kind="column-unrelated",
             category="unanswerable:column-unrelated",
             metadata={"tables": ["film"], "requested": "boiling point"}),
    ]  # fmt: skip
    v = Verifier(db)
    try:
        got = audit_tasks(planted, lake, v)
    finally:
        v.close()
    assert got.total("unanswerable-with-matching-column") == 2, got.examples
