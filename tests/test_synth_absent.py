"""Which attributes a column-related or column-surface request may call absent, and which it asks.

- Two names with one head noun name different attributes only when both say which one and say
  different things (``middle name`` beside ``first_name``; not ``list price`` beside
  ``product_price``); dates, years and times are one head (``release date`` ~ ``release_year``);
  synonyms count (``signup date`` ~ ``create_date``); an address held as text may spell any part
  of an address.
- A person's job and a patron's membership are asked only of the people who have them.
- Column-surface asks only what the subject's kind of entity has (no ``product price`` of a staff
  member, no ``salary`` of a customer).
- No attribute is asked again before the others of its pool have been.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers.unanswerable import _UnansGen, distinct_attributes
from clarisql.envs.synth.names import attributes_of
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier


@pytest.mark.parametrize(
    ("attr", "column", "entity", "distinct"),
    [
        ("middle name", "first_name", "customer", True),
        ("date of birth", "create_date", "customer", True),
        ("hire date", "rental_date", "staff", True),
        ("list price", "product_price", "product", False),  # the product's price is a price
        ("customer address", "store_address", "store", False),
        ("home address", "address", "customer", False),  # "home" only qualifies
        ("unit price", "list_price", "track", False),
        ("start date", "start_time", "engagement", False),
        ("signup date", "signup_on", "member", False),
    ],
)
def test_distinct_attributes(attr: str, column: str, entity: str, distinct: bool) -> None:
    assert distinct_attributes(attr, column, frozenset({entity})) is distinct


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("absent") / "shop.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                               create_date TEXT, address TEXT);
        CREATE TABLE film (film_id INTEGER PRIMARY KEY, title TEXT, release_year INTEGER,
                           customer_id INTEGER REFERENCES customer(customer_id),
                           director_customer_id INTEGER REFERENCES customer(customer_id));
        CREATE TABLE product (product_id INTEGER PRIMARY KEY, product_name TEXT,
                              product_price REAL);
        CREATE TABLE employee (employee_id INTEGER PRIMARY KEY, full_name TEXT, hire_date TEXT,
                               salary REAL);
        """
    )
    firsts = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ida", "Jo", "Kit", "Lu"]
    for i, f in enumerate(firsts, 1):
        conn.execute(
            "INSERT INTO customer VALUES (?, ?, ?, ?, ?)",
            (i, f, f"Smith{i}", f"2020-01-{i:02d}", f"{i} Elm Street, Springfield {10000 + i}"),
        )
        conn.execute("INSERT INTO film VALUES (?, ?, ?, ?, ?)", (i, f"Film {f}", 1990 + i, i, i))
        conn.execute("INSERT INTO product VALUES (?, ?, ?)", (i, f"thing {f}", 1.5 * i))
        conn.execute(
            "INSERT INTO employee VALUES (?, ?, ?, ?)", (i, f"{f} Jones", f"2019-02-{i:02d}", i)
        )
    conn.commit()
    conn.close()
    lake = discover(profile_lake(path))
    v = Verifier(path)
    yield lake, _UnansGen(lake, v, random.Random(0))
    v.close()


def test_a_join_path_leaves_no_doubt_only_where_the_names_say_different_things(gen) -> None:
    lake, g = gen
    customer, film, product = (lake.table(n) for n in ("customer", "film", "product"))
    assert not g.in_doubt(customer, "middle name")  # first_name / last_name say which name
    assert g.in_doubt(customer, "last visit date")  # the latest of its films' years
    assert not g.in_doubt(product, "last restock date")  # no linked row has a date
    assert g.in_doubt(product, "list price")  # product_price
    assert g.in_doubt(film, "release date")  # release_year: a date is read off a year
    assert g.in_doubt(customer, "signup date")  # create_date: signing up is creating
    assert g.in_doubt(customer, "postal code")  # "1 Elm Street, Springfield 10001"
    assert not g.in_doubt(product, "postal code")  # no address reached from a product
    assert g.in_doubt(film, "director name")  # director_customer_id: the director's row
    assert not g.in_doubt(film, "producer name") and g.in_doubt(film, "original title")
    assert g.in_doubt(film, "number of customers")  # a COUNT over the customers it reaches
    assert g.in_doubt(film, "number of clients")  # (people all the same)
    assert not g.in_doubt(film, "number of awards")


def test_jobs_and_memberships_are_asked_of_those_who_have_them() -> None:
    customer, employee = attributes_of("person", "customer"), attributes_of("person", "employee")
    assert "hire date" not in customer and "salary" not in customer
    assert "hire date" in employee and "salary" in employee
    assert "membership number" in customer and "membership number" not in employee
    assert "nationality" in customer and "nationality" in employee


def test_column_surface_asks_only_what_the_kind_of_entity_has(gen) -> None:
    lake, g = gen
    customer, employee, product = (lake.table(n) for n in ("customer", "employee", "product"))
    assert not g.fits(customer, employee, "salary")  # a job's attribute: no customer has one
    assert not g.fits(customer, product, "product price")  # another kind of entity
    assert g.fits(employee, customer, "first name")  # a person's name


def test_no_attribute_is_asked_again_before_the_others(gen) -> None:
    _, g = gen
    g._asked.clear()
    g._asked.update({"a": 2, "b": 0, "c": 1})
    assert g.least_asked(["a", "b", "c"]) == ["b"]
    assert g.least_asked(["a", "c"], among=["a", "b", "c"]) == ["c"]  # at most one over "b"
    assert g.least_asked(["a"], among=["a", "b", "c"]) == ["b"]  # "a" is two over: the wider pool
    g._asked.clear()


def test_column_surface_asks_another_table_s_column_the_subject_could_have(gen) -> None:
    lake, g = gen
    made = [m for m in (g.column_surface() for _ in range(200)) if m is not None]
    assert made  # the employee's table reaches no customer: "the address of the employee ..."
    asked = {(m.meta["tables"][0], m.meta["requested"]) for m in made}
    for m in made:
        other = lake.table(m.meta["resembles"].split(".")[0])
        assert g.fits(lake.table(m.meta["tables"][0]), other, m.meta["requested"])
    assert ("customer", "salary") not in asked and ("customer", "hire date") not in asked


def test_a_job_s_questions_are_asked_only_of_workers(gen) -> None:
    _, g = gen
    made = [m for m in (g.out_of_domain() for _ in range(300)) if m is not None]
    about = {m.meta["about"] for m in made}
    assert {"customer", "employee"} <= about
    for m in made:
        job = "typical day" in m.utterance or "become a better" in m.utterance
        assert not job or m.meta["about"] == "employee", m.utterance


def test_twins_say_an_attribute_without_the_record_s_own_noun(gen) -> None:
    lake, g = gen
    product = lake.table("product")
    twins = [
        m.meta["twin"]["utterance"]
        for m in (g.attr_task("column-related", product, "shelf life", {}) for _ in range(20))
        if m is not None and "twin" in m.meta
    ]
    assert twins and all("product price" not in u and " price" in u for u in twins), twins
