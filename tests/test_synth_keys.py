"""Joins only on keys: unique referenced side, declared foreign keys first, names that agree,
and every alternative key path giving the same answer (real SQLite written by the test)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from clarisql.envs.synth.answerable import Candidate, DraftContext
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.types import join_on
from clarisql.envs.synth.verify import Verifier

CITIES = ["Avon", "Bree", "Corin", "Dale", "Esk", "Fenn", "Gale", "Hove"]


def _db(path: Path, *, declared: bool, consistent: bool, dup_names: bool = False) -> Path:
    rng = random.Random(1)
    conn = sqlite3.connect(path)
    fk = " REFERENCES people(person_id)" if declared else ""
    conn.executescript(
        f"""
        CREATE TABLE people (person_id INTEGER PRIMARY KEY, person_code TEXT, name TEXT,
                             birth_city TEXT);
        CREATE TABLE games (game_id INTEGER PRIMARY KEY, person_id INTEGER{fk},
                            person_code TEXT, points INTEGER, city TEXT);
        CREATE TABLE stores (store_id INTEGER PRIMARY KEY, label TEXT, floor INTEGER);
        """
    )
    for i in range(1, 41):
        name = f"Player {i % 20 if dup_names else i}"
        conn.execute(
            "INSERT INTO people VALUES (?, ?, ?, ?)",
            (i, f"p{i:03d}", name, CITIES[i % len(CITIES)]),
        )
    for g in range(1, 301):
        pid = rng.randint(1, 40)
        # the code of another person when the two keys disagree
        code = pid if consistent else (pid % 40) + 1
        conn.execute(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?)",
            (g, pid, f"p{code:03d}", rng.randint(0, 30), rng.choice(CITIES)),
        )
    # store labels are city names: values contained, names unrelated -> not a key path
    for s, city in enumerate(CITIES, 1):
        conn.execute("INSERT INTO stores VALUES (?, ?, ?)", (s, city, s % 3))
    conn.commit()
    conn.close()
    return path


def _pairs(lake) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    return {(j.left, j.right) for j in lake.joins}


def test_values_alone_do_not_make_a_key(tmp_path: Path) -> None:
    lake = discover(profile_lake(_db(tmp_path / "a.sqlite", declared=False, consistent=True)))
    pairs = _pairs(lake)
    assert (("games", "city"), ("stores", "label")) not in pairs  # contained, names disagree
    assert (("games", "person_id"), ("people", "person_id")) in pairs


def test_the_referenced_side_must_be_unique(tmp_path: Path) -> None:
    conn = sqlite3.connect(_db(tmp_path / "u.sqlite", declared=False, consistent=True))
    conn.executescript(
        "CREATE TABLE awards (award_id INTEGER PRIMARY KEY, name TEXT, year INTEGER);"
        "INSERT INTO awards (name, year) SELECT name, 2000 + person_id % 7 FROM people;"
        "CREATE TABLE honours (honour_id INTEGER PRIMARY KEY, award_name TEXT);"
        "INSERT INTO honours (award_name) SELECT name FROM people;"
        "INSERT INTO awards (name, year) VALUES ('Player 3', 1999);"  # a duplicate name
    )
    conn.commit()
    conn.close()
    lake = discover(profile_lake(tmp_path / "u.sqlite"))
    assert not [j for j in lake.joins if j.right == ("awards", "name")]


def test_declared_foreign_keys_come_first(tmp_path: Path) -> None:
    lake = discover(profile_lake(_db(tmp_path / "d.sqlite", declared=True, consistent=False)))
    between = [j for j in lake.joins if {j.left[0], j.right[0]} == {"games", "people"}]
    assert [(j.left, j.right) for j in between] == [
        (("games", "person_id"), ("people", "person_id"))
    ]
    assert between[0].alternatives == ()


def _join_candidate(lake, pair) -> Candidate:
    (lt, lc), (rt, rc) = pair
    sql = (
        f'SELECT "people"."name", SUM("games"."points") FROM "games" JOIN "people" ON '
        f"{join_on(*pair)} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3"
    )
    cols = [lake.table("people").column("name"), lake.table("games").column("points")]
    return Candidate(
        sql, "Who scored most?", "moderate", "join", cols, ("join",), True, {"join": pair}
    )


def test_alternative_key_paths_must_agree(tmp_path: Path) -> None:
    for consistent in (True, False):
        db = _db(tmp_path / f"c{consistent}.sqlite", declared=False, consistent=consistent)
        lake = discover(profile_lake(db))
        between = [j for j in lake.joins if (j.left[0], j.right[0]) == ("games", "people")]
        assert len(between) == 1 and len(between[0].alternatives) == 1  # two key paths, one kept
        cx = DraftContext(lake, Verifier(db), random.Random(0))
        draft = cx.check(_join_candidate(lake, (between[0].left, between[0].right)))
        if consistent:
            assert draft is not None
        else:
            assert draft is None and cx.rejected[-1] == "join paths disagree"
