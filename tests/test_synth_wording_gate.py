"""The reviewer's remaining patterns, each caught by the audit and made by no generator:
nouns said twice over ("the address for the address", "the total total"), table or query words
("which invoices row", "the rating values", "without repeats", "(COUNT)"), nouns in the wrong
number ("How many inventory", "per genres"), listings of bare row keys, swaps in a group named by
a number or of a value the group shares, swaps that break an order of the row's dates, point
updates off the column's grain or of a number tied to another, and replies that read like SQL."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.simulators.fixed import FixedSimulator, spoken_identifier
from clarisql.envs.synth.answerable import DraftContext, makers
from clarisql.envs.synth.audit import FLAWS, audit_tasks
from clarisql.envs.synth.consistency import Dependencies, varies_within
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import write_tasks
from clarisql.envs.synth.layers.common import Agg, Made, fill
from clarisql.envs.synth.layers.twins import twin_tasks
from clarisql.envs.synth.layers.writes import _WriteGen
from clarisql.envs.synth.phrasing import (
    attr_words,
    bad_plural,
    doubled_noun,
    row_noun,
    rows_noun,
    sql_speak,
    wording_flaw,
)
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

COUNTRIES = ["Chile", "Peru", "Japan", "Kenya", "Norway", "Spain", "Italy", "Egypt"]
RATINGS = ["G", "PG", "PG-13", "R", "NC-17"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A rental shop: cities whose names repeat ("London" twice), addresses whose district is
    their city's (two of the cities with several addresses disagree: an error of the data), an
    ``inventory`` table (a mass noun, no name of its own), rentals returned after they start,
    payments whose amounts all end in .99, films whose size follows their length."""
    path = tmp_path_factory.mktemp("shop") / "shop.sqlite"
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE country (country_id INTEGER PRIMARY KEY, country TEXT);
        CREATE TABLE city (city_id INTEGER PRIMARY KEY, city TEXT,
            country_id INTEGER REFERENCES country(country_id));
        CREATE TABLE address (address_id INTEGER PRIMARY KEY, address TEXT, district TEXT,
            city_id INTEGER REFERENCES city(city_id));
        CREATE TABLE film (film_id INTEGER PRIMARY KEY, title TEXT, rating TEXT,
            length INTEGER, size_mb REAL);
        CREATE TABLE inventory (inventory_id INTEGER PRIMARY KEY,
            film_id INTEGER REFERENCES film(film_id), store_id INTEGER);
        CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, first_name TEXT,
            last_name TEXT, address_id INTEGER REFERENCES address(address_id));
        CREATE TABLE rental (rental_id INTEGER PRIMARY KEY, rental_date TEXT,
            inventory_id INTEGER REFERENCES inventory(inventory_id),
            customer_id INTEGER REFERENCES customer(customer_id), return_date TEXT);
        CREATE TABLE payment (payment_id INTEGER PRIMARY KEY,
            rental_id INTEGER REFERENCES rental(rental_id), amount REAL, payment_date TEXT);
        """
    )
    conn.executemany("INSERT INTO country VALUES (?, ?)", enumerate(COUNTRIES, 1))
    names = [f"Town{chr(65 + i // 26)}{chr(97 + i % 26)}" for i in range(38)] + ["London"] * 2
    for i, name in enumerate(names, 1):
        conn.execute("INSERT INTO city VALUES (?, ?, ?)", (i, name, i % 8 + 1))
    a = 0
    for c in range(1, 41):
        n = 2 if c <= 6 or c == 40 else 1  # seven cities hold two addresses
        for j in range(n):
            a += 1
            district = f"District {c}" if not (c in (2, 40) and j) else f"Other {c}"
            conn.execute(
                "INSERT INTO address VALUES (?, ?, ?, ?)", (a, f"{a} Main Street", district, c)
            )
    for f in range(1, 81):
        length = rng.randint(60, 180)
        conn.execute(
            "INSERT INTO film VALUES (?, ?, ?, ?, ?)",
            (f, f"FILM TITLE {f:03d}", RATINGS[f % 5], length, round(length * 7.5 + rng.random(), 1)),
        )  # fmt: skip
    for i in range(1, 201):
        conn.execute("INSERT INTO inventory VALUES (?, ?, ?)", (i, rng.randint(1, 80), i % 2 + 1))
    first = ["MARY", "JOHN", "LINDA", "PAUL", "NANCY", "MARK", "SUSAN", "KEVIN"]
    last = ["SMITH", "JONES", "BROWN", "DAVIS", "MILLER", "WILSON", "MOORE", "TAYLOR", "HALL"]
    for c in range(1, 61):
        conn.execute(
            "INSERT INTO customer VALUES (?, ?, ?, ?)",
            (c, rng.choice(first), rng.choice(last), rng.randint(1, a)),
        )
    for r in range(1, 401):
        day = rng.randint(1, 20)
        conn.execute(
            "INSERT INTO rental VALUES (?, ?, ?, ?, ?)",
            (r, f"2005-07-{day:02d} 10:00:00", rng.randint(1, 200), rng.randint(1, 60),
             f"2005-07-{day + rng.randint(1, 8):02d} 09:00:00"),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO payment VALUES (?, ?, ?, ?)",
            (r, r, rng.choice([0.99, 1.99, 2.99, 3.99, 4.99, 5.99]), f"2005-07-{day:02d}"),
        )
    conn.commit()
    conn.close()
    return path


def _lake(db: Path):
    return discover(profile_lake(db))


def test_the_detectors_catch_the_reviewers_examples_and_pass_good_wording() -> None:
    bad = {
        'Tell me the address for the address with district "Baki".': doubled_noun,
        "For each country of the customers, what is the total total of their invoices?": (
            doubled_noun
        ),
        'Among the employees of the employee "Adams", swap them.': doubled_noun,
        "For each billing city, which invoices row has the highest total?": sql_speak,
        "Which rating values have an average length above the average?": sql_speak,
        "For the customers whose last name is X, list their payment IDs, without repeats.": (
            sql_speak
        ),
        "I want the number of rows (COUNT).": sql_speak,
        "How many inventory are there for each rating of their films?": bad_plural,
        "Which genres have more than twice the average number of tracks per genres?": bad_plural,
        "How many film are there?": bad_plural,
    }
    for text, detector in bad.items():
        assert detector(text), text
        assert wording_flaw(text), text
    good = [
        "Delete the track with track ID 410.",
        "How do the payments for payment date year 2005 look in numbers?",
        "I'd like to know the sum of the totals of the invoices in 2011.",
        "How many inventory items are there for each rating of their films?",
        "How many staff members are there?",
        "Which genres have more than twice the average number of tracks per genre?",
        'Send the address of "the address" to me.',
        "I need the floor number of the address whose district is X.",
        "Which ratings have an average length above the average over all films?",
    ]
    for text in good:
        assert wording_flaw(text) is None, (text, wording_flaw(text))
    assert row_noun("inventory") == "inventory item" and rows_noun("inventory") == "inventory items"
    assert rows_noun("staff") == "staff members" and rows_noun("film") == "films"
    # an attribute without the record's own noun: the "product price" of a product
    assert attr_words("product price", "product") == "price"
    assert attr_words("store address", "department store") == "address"
    assert attr_words("address", "address") == "address"
    assert attr_words("customer ID", "customer") == "customer ID"


def test_every_maker_of_questions_is_gated() -> None:
    flawed = Made('Tell me the address for the address with district "X".', "well-specified")
    assert fill(1, [lambda: flawed], set(), budget=3) == []
    partner = Task(
        id="u1",
        db="x.sqlite",
        utterance='Tell me the floor count for the address with district "X".',
        answerable=False,
        unanswerable_kind="column-related",
        category="unanswerable:column-related",
        metadata={"twin": {"utterance": flawed.utterance, "gold_sql": "SELECT 1, 2"}},
    )
    assert twin_tasks([partner], None, 5) == []  # type: ignore[arg-type]


def test_drafts_count_items_list_rows_by_what_they_are_and_never_bare_keys(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    cx = DraftContext(lake, v, random.Random(0))
    flawed = "What is the total total of the films?"
    assert cx.draft("SELECT 1", flawed, "simple", "single", [], ()) is None
    assert cx.rejected and cx.rejected[-1] == "wording"
    drafts = []
    for cell in makers(cx).values():
        for make in cell:
            for _ in range(6):
                d = make()
                if d is not None:
                    drafts.append(d)
    text = "\n".join(d.question for d in drafts)
    assert "inventory items" in text, text
    assert "highest 2 counts" not in text and "highest 3 counts" not in text, text
    assert not any(wording_flaw(d.question) for d in drafts), text
    tasks = [
        Task(id=f"d{i}", db="shop.sqlite", utterance=d.question, gold_sql=d.sql)
        for i, d in enumerate(drafts)
    ]
    report = audit_tasks(tasks, lake, v)
    assert report.total("own-id-list") == 0, report.examples
    # the rentals (no name of their own) are listed by key and date, never by key alone
    rentals = [d for d in drafts if d.sql.startswith('SELECT "rental"."rental_id"')]
    assert rentals and all('_date"' in d.sql.split(" FROM ")[0] for d in rentals), text


def _w(i: int, text: str, acts: list[str]) -> Task:
    return Task(
        id=f"w{i}", db="shop.sqlite", utterance=text, category="write", writable=True,
        gold_actions=acts, instruction=text,
    )  # fmt: skip


def _t(i: int, q: str, sql: str) -> Task:
    return Task(id=f"t{i}", db="shop.sqlite", utterance=q, gold_sql=sql)


def test_the_audit_counts_each_planted_pattern(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    r1, r2 = v.rows("SELECT rental_id, rental_date FROM rental ORDER BY rental_date LIMIT 2")
    late = v.rows("SELECT rental_id, rental_date FROM rental ORDER BY rental_date DESC LIMIT 1")[0]
    tasks = [
        _t(1, 'What payment ID do the payments with amount 0.99 have?',
           "SELECT payment_id FROM payment WHERE amount = 0.99"),
        _t(2, "Which film row has the highest length?", "SELECT MAX(length) FROM film"),
        _t(3, "How many inventory are there?", "SELECT COUNT(*) FROM inventory"),
        _t(4, 'Tell me the address for the address with district "District 7".',
           "SELECT address FROM address WHERE district = 'District 7'"),
        _w(5, "Among the rentals of inventory 12, the rental with rental ID 1 and the one with "
              "rental ID 2 have each other's rental date; please swap them.", [
            f"UPDATE rental SET rental_date = '{r2[1]}' WHERE rental_id = {r1[0]}",
            f"UPDATE rental SET rental_date = '{r1[1]}' WHERE rental_id = {r2[0]}"]),
        _w(6, 'Among the addresses of the city "Townab", the address with address ID 3 and the '
              "one with address ID 4 have each other's district; please swap them.", [
            "UPDATE address SET district = 'District 2' WHERE address_id = 4",
            "UPDATE address SET district = 'Other 2' WHERE address_id = 3"]),
        _w(7, "Set the rental date of the rental with rental ID 1 to the last one.",
           [f"UPDATE rental SET rental_date = '{late[1]}' WHERE rental_id = {r1[0]}"]),
        _w(8, "Set the size in MB of the film with film ID 1 to 9999.",
           ["UPDATE film SET size_mb = 9999 WHERE film_id = 1"]),
        # not flaws: a name listed with its key, a count of inventory items
        _t(9, "Which films have rating \"G\"? Give their film ID and title.",
           "SELECT film_id, title FROM film WHERE rating = 'G'"),
        _t(10, "How many inventory items are there?", "SELECT COUNT(*) FROM inventory"),
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    got = {f: report.total(f) for f in FLAWS if report.total(f)}
    assert got == {
        "own-id-list": 1,
        "sql-speak": 1,
        "bad-plural": 1,
        "doubled-noun": 1,
        "swap-group-unnamed": 1,
        "swap-of-group-value": 1,  # the district is each city's
        "swap-between-unrelated-rows": 1,  # (the two first rentals share nothing either)
        "write-leaves-row-inconsistent": 2,  # a rental returned before it starts; a size alone
    }, report.examples


def test_the_data_says_which_values_a_write_may_move(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    deps = Dependencies(v)
    assert not varies_within(v, "address", "city_id", "district")  # the city's own value
    assert varies_within(v, "rental", "customer_id", "rental_date")  # each rental's own
    rental = lake.table("rental")
    assert ("return_date", -1) in deps.ordered(rental, "rental_date")
    row = {"rental_date": "2005-07-03 10:00:00", "return_date": "2005-07-05 09:00:00"}
    assert deps.breaks_order(rental, row, "rental_date", "2005-07-09 10:00:00")
    assert deps.breaks_order(rental, row, "rental_date", "2005-07-02 10:00:00") is None
    assert deps.tied(lake.table("film"), "size_mb") == "length"
    assert deps.tied(lake.table("payment"), "amount") is None
    gen = _WriteGen(lake, v, random.Random(0))
    amount = lake.table("payment").column("amount")
    assert {gen.new_number(amount, 2.99) for _ in range(20)} <= {1.99, 3.99}  # the grain
    assert (
        gen.group_words(lake.table("address"), lake.table("address").column("city_id"), 39) is None
    )
    named = gen.group_words(lake.table("city"), lake.table("city").column("country_id"), 3)
    assert named == 'the cities of the country "Japan"'
    inv = lake.table("rental").column("inventory_id")
    assert gen.group_words(lake.table("rental"), inv, 12) is None  # no name: no swap there


def test_writes_make_none_of_the_write_patterns(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    tasks = write_tasks(lake, [], v, random.Random(0), 40)
    assert len(tasks) >= 20
    report = audit_tasks(tasks, lake, v)
    for f in ("write-leaves-row-inconsistent", "swap-group-unnamed", "swap-of-group-value",
              "swap-between-unrelated-rows", "doubled-noun", "sql-speak", "bad-plural"):  # fmt: skip
        assert report.total(f) == 0, (f, report.examples[f])
    for t in tasks:
        assert "wrong way round" not in t.utterance and "inventory with" not in t.utterance


def test_replies_read_like_a_person(db: Path) -> None:
    lake = _lake(db)
    length = lake.table("film").column("length")
    amount = lake.table("payment").column("amount")
    said = [
        Agg("film", "count", None).reveal(),
        Agg("payment", "sum", amount).reveal(),
        Agg("film", "avg", length).reveal(),
        Agg("inventory", "count", None).reveal(),
    ]
    assert said == [  # (no table named: a family's table is a scope the reply must not give)
        "I just want to know how many there are.",
        "I want the total amount.",
        "I want the average length.",
        "I just want to know how many there are.",
    ]
    assert spoken_identifier("BillingCountry") == "billing country"
    assert spoken_identifier("city") == "city"
    sim = FixedSimulator()
    reply = sim.render(Underspec(Label("Missing", None, "BillingState"), "WA"))
    assert reply == "The billing state I mean is WA."


def test_one_detector_of_joined_items() -> None:
    from clarisql.envs.synth.column_roles import credit_list, joined_items, tag_list
    from clarisql.envs.synth.layers.surfaces import listed

    tags = ["Trailers,Deleted Scenes", "Commentaries,Trailers", "Deleted Scenes", "Trailers",
            "Commentaries,Deleted Scenes", "Trailers,Commentaries"]  # fmt: skip
    credits = ["Bill Gould/Mike Bordin/Mike Patton", "Mike Patton/Jim Martin/Roddy Bottum",
               "Bill Gould/Jim Martin/Roddy Bottum", "Mike Bordin", "Ann Lee",
               "Roddy Bottum, Mike Patton & Bill Gould"]  # fmt: skip
    streets = [f"{n} Main Street, Springfield" for n in range(20)]
    names = [f"Name {n}" for n in range(20)]
    for values, tag, credit, no_name in (
        (tags, True, False, True),
        (credits, False, True, True),
        (streets, False, False, True),
        (names, False, False, False),
    ):
        got = joined_items(values)
        assert (got.tags, got.credits, got.no_name) == (tag, credit, no_name), values
        assert got.tags == tag_list(values) and got.credits == credit_list(values)
        assert got.no_name == listed(values) and got.is_list == (tag or credit)


def test_no_delete_leaves_a_total_wrong_and_a_company_word_is_spelled(tmp_path: Path) -> None:
    from clarisql.envs.synth.consistency import spelled_in_row
    from clarisql.envs.synth.layers.writes import derived_columns, feeds_total, references

    path = tmp_path / "sales.sqlite"
    rng = random.Random(1)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE invoices (invoice_id INTEGER PRIMARY KEY, billing_city TEXT, total REAL);
        CREATE TABLE invoice_lines (line_id INTEGER PRIMARY KEY,
            invoice_id INTEGER REFERENCES invoices(invoice_id), unit_price REAL, quantity INTEGER);
        """
    )
    for i in range(1, 41):
        lines = [(round(rng.choice([0.99, 1.99]), 2), rng.randint(1, 3)) for _ in range(3)]
        total = round(sum(p * q for p, q in lines), 2)
        conn.execute("INSERT INTO invoices VALUES (?, ?, ?)", (i, f"City {i % 7}", total))
        for p, q in lines:
            conn.execute("INSERT INTO invoice_lines VALUES (NULL, ?, ?, ?)", (i, p, q))
    conn.commit()
    conn.close()
    lake, v = _lake(path), Verifier(path)
    refs = references(lake, v)
    derived = derived_columns(lake, v, refs)
    assert ("invoices", "total") in derived
    assert feeds_total("invoice_lines", derived, refs) and not feeds_total(
        "invoices", derived, refs
    )
    tasks = write_tasks(lake, [], v, random.Random(0), 20)
    assert not any(
        a.startswith('DELETE FROM "invoice_lines"') for t in tasks for a in t.gold_actions
    )
    planted = [
        _w(
            1,
            "Delete the invoice line with line ID 5.",
            ["DELETE FROM invoice_lines WHERE line_id = 5"],
        )
    ]
    assert audit_tasks(planted, lake, v).total("write-breaks-derived-total") == 1
    row = {"company": "Microsoft Corporation", "email": "jacksmith@microsoft.com"}
    assert spelled_in_row(row, "company") == "email"
    assert spelled_in_row({"company": "Telus", "email": "mph@shaw.ca"}, "company") is None


def test_a_new_number_is_one_of_the_column_s_common_values(tmp_path: Path) -> None:
    # amounts on a grid of x.99, and one odd 1.98 held by one row in several hundred: a point
    # update near 2.99 takes 1.99 or 3.99, never the odd one; with no common value near, any
    # held value near
    path = tmp_path / "pay.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE payment (payment_id INTEGER PRIMARY KEY, amount REAL, note TEXT)")
    grid = [0.99, 1.99, 2.99, 3.99, 4.99]
    rows = [(i, grid[i % 5], f"n{i}") for i in range(1, 401)] + [(401, 1.98, "odd")]
    rows += [(402, 40.5, "big"), (403, 41.25, "big")]
    conn.executemany("INSERT INTO payment VALUES (?, ?, ?)", rows)
    conn.commit()
    conn.close()
    lake = discover(profile_lake(path))
    v = Verifier(path)
    try:
        gen = _WriteGen(lake, v, random.Random(0))
        amount = lake.table("payment").column("amount")
        assert {gen.new_number(amount, 2.99) for _ in range(40)} <= {1.99, 3.99}
        assert gen.new_number(amount, 1.99) in (0.99, 2.99)  # (the nearest common ones)
        assert gen.new_number(amount, 0.99) == 1.99  # (the nearest common one above)
        assert gen.new_number(amount, 40.5) == 41.25  # (no common value near: a held one)
    finally:
        v.close()
