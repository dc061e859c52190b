"""Column-surface along a path to other people (:meth:`_UnansGen.other_people`).

- A column only another people's table has (the ``birth date`` of the employees a customer's
  ``support_rep_id`` leads to) is asked of the customer as column-surface: the join gives the
  rep's, not the customer's; the twin asks it of an employee in the same frame.
- Rows linked one to one (a ``student`` that is a ``person``) are one person: nothing the
  other holds is asked. Two tables that each have one address row are not one person.
- Only people (rows a name names, not a membership's link rows): what a city's country has (a
  currency) is often the city's too.
- What only another role has is not asked (no ``hire date`` of a customer), and no attribute
  more than ``MAX_ASKS`` times.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers.unanswerable import MAX_ASKS, _UnansGen
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier

SCHEMA = """
CREATE TABLE address (address_id INTEGER PRIMARY KEY, street TEXT);
CREATE TABLE employee (employee_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                       birth_date TEXT, hire_date TEXT,
                       address_id INTEGER UNIQUE REFERENCES address(address_id));
CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                       email TEXT, support_rep_id INTEGER REFERENCES employee(employee_id),
                       address_id INTEGER UNIQUE REFERENCES address(address_id));
CREATE TABLE person (person_id INTEGER PRIMARY KEY, full_name TEXT, birth_date TEXT,
                     nationality TEXT);
CREATE TABLE student (student_id INTEGER PRIMARY KEY REFERENCES person(person_id),
                      nickname TEXT, enrolled TEXT);
CREATE TABLE member (member_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                     gender TEXT);
CREATE TABLE membership (member_id INTEGER REFERENCES member(member_id),
                         customer_id INTEGER REFERENCES customer(customer_id), status TEXT);
CREATE TABLE engagement (engagement_id INTEGER PRIMARY KEY, venue TEXT, start_date TEXT,
                         end_date TEXT, customer_id INTEGER REFERENCES customer(customer_id));
CREATE TABLE song (song_id INTEGER PRIMARY KEY, title TEXT, composer TEXT);
CREATE TABLE country (country_id INTEGER PRIMARY KEY, country_name TEXT, currency TEXT);
CREATE TABLE city (city_id INTEGER PRIMARY KEY, city_name TEXT,
                   country_id INTEGER REFERENCES country(country_id));
"""

NAMES = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ida", "Jo", "Kit", "Lu"]


@contextmanager
def _generator(path: Path, seed: int) -> Iterator[tuple]:
    """``(lake, generator)`` of the database at ``path``; its verifier closed afterwards."""
    lake = discover(profile_lake(path))
    v = Verifier(path)
    try:
        yield lake, _UnansGen(lake, v, random.Random(seed))
    finally:
        v.close()


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("people") / "people.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for i, f in enumerate(NAMES, 1):
        conn.execute("INSERT INTO address VALUES (?, ?)", (i, f"{i} Elm Street"))
        conn.execute("INSERT INTO address VALUES (?, ?)", (100 + i, f"{i} Oak Road"))
        conn.execute(
            "INSERT INTO employee VALUES (?, ?, ?, ?, ?, ?)",
            (i, f, f"Jones{i}", f"1980-03-{i:02d}", f"2010-04-{i:02d}", 100 + i),
        )
        conn.execute(
            "INSERT INTO customer VALUES (?, ?, ?, ?, ?, ?)",
            (i, f"{f}a", f"Smith{i}", f"{f.lower()}@mail.example", 1 + i % 4, i),
        )
        conn.execute(
            "INSERT INTO person VALUES (?, ?, ?, ?)",
            (i, f"{f} Brown", f"2001-05-{i:02d}", ["Irish", "Welsh", "Scots"][i % 3]),
        )
        conn.execute("INSERT INTO student VALUES (?, ?, ?)", (i, f"{f}y", f"2019-09-{i:02d}"))
        conn.execute(
            "INSERT INTO member VALUES (?, ?, ?, ?)", (i, f"{f}m", f"Moss{i}", "FM"[i % 2])
        )
        conn.execute(
            "INSERT INTO membership VALUES (?, ?, ?)", (i, 1 + i % 5, ["active", "lapsed"][i % 2])
        )
        conn.execute(
            "INSERT INTO engagement VALUES (?, ?, ?, ?, ?)",
            (i, f"Hall {f}", f"2020-02-{i:02d}", f"2020-03-{i:02d}", 1 + i % 6),
        )
        conn.execute("INSERT INTO country VALUES (?, ?, ?)", (i, f"Land{f}", f"C{i}"))
        conn.execute("INSERT INTO city VALUES (?, ?, ?)", (i, f"Town{f}", 1 + i % 3))
    for i in range(1, 41):  # (a composer's songs: a scope value several rows hold)
        conn.execute("INSERT INTO song VALUES (?, ?, ?)", (i, f"Tune {i}", f"Writer {i % 8}"))
    conn.commit()
    conn.close()
    with _generator(path, 0) as got:
        yield got


def test_other_people_are_those_no_one_to_one_link_makes_the_same(gen) -> None:
    lake, g = gen
    # (a membership's rows link people, no name names them: not people)
    assert g.other_people(lake.table("customer")) == frozenset({"employee", "member"})
    # a student is a person (a key that is the other's key): one person, two tables
    assert "person" in g.same_rows(lake.table("student"))
    assert "person" not in g.other_people(lake.table("student"))
    # each has one address row: that does not make a customer an employee
    assert "employee" not in g.same_rows(lake.table("customer"))
    # only people: a city's country is no other "person"
    assert g.other_people(lake.table("city")) == frozenset()


def test_another_person_s_column_is_no_doubt_only_besides_other_people(gen) -> None:
    lake, g = gen
    customer = lake.table("customer")
    assert g.in_doubt(customer, "birth date")  # the join path reaches a birth date
    assert not g.in_doubt(customer, "birth date", g.other_people(customer))  # the rep's
    # the student's own person row holds a birth date: never asked
    student = lake.table("student")
    assert g.in_doubt(student, "birth date", g.other_people(student))
    # what only workers have is no customer's attribute
    assert not g.fits(customer, lake.table("employee"), "hire date")
    assert g.fits(customer, lake.table("employee"), "birth date")
    assert g.fits(lake.table("employee"), customer, "email")  # (an email address)


def test_column_surface_asks_another_person_s_column_with_that_person_as_twin(gen) -> None:
    with _generator(gen[0].db_path, 3) as (lake, g):
        made = [m for m in (g.column_surface() for _ in range(200)) if m is not None]
    asked = {(m.meta["tables"][0], m.meta["requested"]) for m in made}
    pathed = {m.meta["resembles"] for m in made if m.meta["tables"][0] == "customer"}
    assert "employee.birth_date" in pathed  # (reached by the support_rep_id join)
    assert ("customer", "birth date") in asked
    assert {t for t, a in asked if a == "email"} <= {"employee", "member"}  # (the customers')
    assert any(a == "email" for _, a in asked)
    # another person's column of two values (a gender) is asked too; a membership's status not
    assert any(a == "gender" for _, a in asked)
    assert not any(a == "status" for _, a in asked)
    assert not any(a == "hire date" for _, a in asked)
    assert not any(t in ("student", "city") for t, _ in asked)
    owned = same_key = 0
    for m in made:
        assert sum(x.meta["requested"] == m.meta["requested"] for x in made) <= MAX_ASKS
        owner = m.meta["resembles"].split(".")[0]
        twin = m.meta.get("twin")
        if twin and twin["tables"] == [owner]:  # the same attribute, asked of the other person
            owned += 1
            assert m.meta["requested"] in twin["utterance"]
            assert f"FROM {owner} " in twin["gold_sql"].replace('"', "")
            # named by the same key where the other person has one: only the record differs
            key, tkey = _key_said(m.utterance), _key_said(twin["utterance"])
            if key in ("first name", "last name"):  # (both tables have these; email not)
                assert tkey == key, (m.utterance, twin["utterance"])
                same_key += 1
    assert owned >= 1 and same_key >= 1


def _key_said(text: str) -> str | None:
    got = re.search(r"(?:with|whose) ([a-z ]+?)(?: is)? [\"\d]", text)
    return got.group(1) if got else None


def test_what_the_row_gives_another_way_stays_in_doubt(gen) -> None:
    lake, g = gen
    # a span of a row with a start and an end; a role's number of a row with its own key
    assert g.in_doubt(lake.table("engagement"), "duration")
    assert g.in_doubt(lake.table("member"), "membership number")
    assert g.in_doubt(lake.table("employee"), "employee number")
    assert not g.in_doubt(lake.table("member"), "passport number")
    assert not g.in_doubt(lake.table("customer"), "duration")  # (no two dates of its own)
    assert not g.absent_anywhere("lyricist")  # (songwriting credits: a composer)


def test_a_part_of_an_attribute_keeps_what_tells_it_apart(gen) -> None:
    lake, g = gen
    customer, employee = lake.table("customer"), lake.table("employee")
    assert g.fits(employee, customer, "email")  # (an email address)
    assert g.fits(customer, employee, "birth date")
    assert not g.fits(customer, employee, "status")  # (a bare head: which status?)
    assert not g.fits(customer, employee, "number")


def test_a_listing_twin_lists_the_rows_of_a_scope_value(gen) -> None:
    with _generator(gen[0].db_path, 0) as (lake, g):
        song = lake.table("song")
        tpl = "List the {attr} of every {subj} whose {key} is {v}."  # (no {subjs} in it)
        got = g.owner_twin(tpl, (song, song.column("title")), "title", listing=True)
        one = g.owner_twin(tpl, (song, song.column("composer")), "composer", listing=False)
    # the rows of one value several rows hold (a composer's songs), never of a unique title
    assert got is not None and '"composer" = ' in got["gold_sql"]
    assert one is not None and '"composer" = ' not in one["gold_sql"]


def test_a_staff_of_two_are_people_too(tmp_path) -> None:
    # a table of two named people is people, although its names are too few to be a name
    # column a question picks rows by (common.entities)
    path = tmp_path / "two.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE staff (staff_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                            email TEXT);
        CREATE TABLE actor (actor_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT);
        CREATE TABLE rental (rental_id INTEGER PRIMARY KEY,
                             staff_id INTEGER REFERENCES staff(staff_id),
                             actor_id INTEGER REFERENCES actor(actor_id));
        """
    )
    conn.executemany(
        "INSERT INTO staff VALUES (?, ?, ?, ?)",
        [(1, "Mike", "Hillyer", "mike@x.example"), (2, "Jon", "Stephens", "jon@x.example")],
    )
    for i, f in enumerate(NAMES, 1):
        conn.execute("INSERT INTO actor VALUES (?, ?, ?)", (i, f.upper(), f"ACT{i}"))
        conn.execute("INSERT INTO rental VALUES (?, ?, ?)", (i, 1 + i % 2, i))
    conn.commit()
    conn.close()
    with _generator(path, 0) as (lake, g):
        assert "staff" in g.other_people(lake.table("actor"))


def test_a_column_column_surface_asks_is_never_withheld(gen, monkeypatch) -> None:
    """The employees' birth date is what column-surface asks of a customer: withheld, the
    suite would have no column-surface request left; a person's nationality may go."""
    from clarisql.envs.synth.withhold import eligible

    monkeypatch.setenv("CLARISQL_SYNTH_EMBEDDER", "hashing")
    lake = gen[0]
    v = Verifier(lake.db_path)
    try:
        got = {(t.name, c.name) for _, members in eligible(lake, v) for t, c, _ in members}
    finally:
        v.close()
    assert ("employee", "birth_date") not in got
    assert ("person", "nationality") in got  # (what no column-surface asks may go)
