"""Writes whose premise the row itself contradicts, and the wording the reviewer flagged: the
audit check catches planted cases (a state of another city, a swapped first name the e-mail still
spells), the write generator makes none, swaps name their group as a user would, no layer emits
a noun said twice over, and drafted questions say "per genre", "which track" and list names, not
the ids of a third table."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.answerable import DraftContext, makers
from clarisql.envs.synth.answerable_join import _j_above
from clarisql.envs.synth.audit import audit_tasks
from clarisql.envs.synth.consistency import Dependencies, shares_person, spelled_in_row
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import write_tasks
from clarisql.envs.synth.layers.common import Made, fill
from clarisql.envs.synth.phrasing import doubled_noun
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task

PLACES = [("Salt Lake City", "UT", "USA"), ("Boston", "MA", "USA"), ("Austin", "TX", "USA"),
          ("Rio de Janeiro", "RJ", "Brazil"), ("Brasilia", "DF", "Brazil"),
          ("Toronto", "ON", "Canada"), ("Vancouver", "BC", "Canada"), ("Halifax", "NS", "Canada")]  # fmt: skip
FIRST = ["Martha", "Hannah", "Aaron", "Mark", "Frances", "Janet", "Helena", "Luis", "Ellie", "Tim"]
LAST = ["Silk", "Schneider", "Mitchell", "Taylor", "Parker", "Phillips", "Holy", "Rojas", "Sul"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rows") / "shop.sqlite"
    rng = random.Random(5)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE employees (employee_id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT,
            last_name TEXT, email TEXT, city TEXT, state TEXT, country TEXT,
            support_rep_id INTEGER REFERENCES employees(employee_id));
        CREATE TABLE invoices (invoice_id INTEGER PRIMARY KEY,
            customer_id INTEGER REFERENCES customers(customer_id), billing_city TEXT,
            billing_state TEXT, billing_country TEXT, total REAL,
            clerk_id INTEGER REFERENCES employees(employee_id));
        CREATE TABLE genres (genre_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE media_types (media_type_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE tracks (track_id INTEGER PRIMARY KEY, name TEXT,
            genre_id INTEGER REFERENCES genres(genre_id),
            media_type_id INTEGER REFERENCES media_types(media_type_id), milliseconds INTEGER);
        """
    )
    for e in range(1, 4):
        conn.execute("INSERT INTO employees VALUES (?, 'Sales Support Agent')", (e,))
    for c in range(1, 61):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        city, state, country = rng.choice(PLACES)
        conn.execute(
            "INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (c, first, last, f"{first}.{last}{c}@mail.com".lower(), city, state, country,
             rng.randint(1, 3)),
        )  # fmt: skip
    cust = conn.execute("SELECT customer_id, city, state, country FROM customers").fetchall()
    for i in range(1, 301):
        c = cust[i % 8] if i <= 160 else rng.choice(cust)  # a few customers buy far more
        conn.execute(
            "INSERT INTO invoices VALUES (?, ?, ?, ?, ?, ?, ?)",
            (i, c[0], c[1], c[2], c[3], round(rng.uniform(1, 20), 2), rng.randint(1, 3)),
        )
    for g, name in enumerate(["Rock", "Jazz", "Metal", "Blues", "Latin", "Pop"], 1):
        conn.execute("INSERT INTO genres VALUES (?, ?)", (g, name))
    for m, name in enumerate(["MPEG audio file", "AAC audio file"], 1):
        conn.execute("INSERT INTO media_types VALUES (?, ?)", (m, name))
    for t in range(1, 151):
        g = 1 if t <= 90 else rng.randint(2, 6)  # one genre with far more tracks than the rest
        conn.execute(
            "INSERT INTO tracks VALUES (?, ?, ?, ?, ?)",
            (t, f"Song {t:03d}", g, rng.randint(1, 2), rng.randint(100_000, 400_000)),
        )
    conn.commit()
    conn.close()
    return path


def _lake(db: Path):
    return discover(profile_lake(db))


def test_dependencies_found_on_the_data(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    deps = Dependencies(v)
    t = lake.table("invoices")
    assert {"billing_city", "customer_id"} <= set(deps.determinants(t, "billing_state"))
    assert "billing_country" in deps.dependents(t, "billing_state")
    assert "total" not in deps.determinants(t, "billing_state")  # (unique-ish, no repeats)
    row = dict(zip([c.name for c in t.columns], v.rows("SELECT * FROM invoices LIMIT 1")[0]))
    same = row["billing_state"]
    other = next(s for _, s, _ in PLACES if s != same)
    assert deps.breaks_dependency(t, row, "billing_state", other, "invoice_id")
    assert deps.breaks_dependency(t, row, "billing_state", same, "invoice_id") is None
    # a city no other row holds still fixes its state: no point update of the state alone
    lone = {**row, "billing_city": "Nowhere", "customer_id": None}
    assert deps.breaks_dependency(t, lone, "billing_state", other, "invoice_id")
    near = next(s for _, s, n in PLACES if n == row["billing_country"] and s != same)
    assert deps.breaks_dependency(t, lone, "billing_state", near, "invoice_id")
    # (as part of a swap the lone city is no evidence; the state's own city still is)
    assert "billing_city" in deps.breaks_dependency(
        t, lone, "billing_state", near, "invoice_id", alone=False
    )
    row2 = {"first_name": "Martha", "email": "marthasilk@gmail.com", "city": "Oslo"}
    assert spelled_in_row(row2, "first_name") == "email"
    assert spelled_in_row(row2, "city") is None


def _w(i: int, text: str, acts: list[str]) -> Task:
    return Task(
        id=f"w{i}", db="shop.sqlite", utterance=text, category="write", writable=True,
        gold_actions=acts, instruction=text,
    )  # fmt: skip


def test_audit_catches_rows_that_contradict_the_write(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    inv = v.rows("SELECT invoice_id, billing_state FROM invoices WHERE billing_state = 'UT'")[0]
    far = v.rows(
        "SELECT c.customer_id, d.customer_id FROM customers c JOIN customers d "
        "ON c.support_rep_id = d.support_rep_id AND c.customer_id < d.customer_id "
        "AND c.first_name <> d.first_name LIMIT 1"
    )[0]
    fn = dict(v.rows(f"SELECT customer_id, first_name FROM customers WHERE customer_id IN {far}"))
    tasks = [
        _w(1, "The billing state of invoice 1 should be RJ.",
           [f"UPDATE invoices SET billing_state = 'RJ' WHERE invoice_id = {inv[0]}"]),
        _w(2, "Swap the first names of two customers.", [
            f"UPDATE customers SET first_name = '{fn[far[1]]}' WHERE customer_id = {far[0]}",
            f"UPDATE customers SET first_name = '{fn[far[0]]}' WHERE customer_id = {far[1]}"]),
        # not flaws: a total corrected, the state a row already agrees with
        _w(3, "Set the total of invoice 2 to 9.5.",
           ["UPDATE invoices SET total = 9.5 WHERE invoice_id = 2"]),
        _w(4, "Set the billing state of the invoice to UT.",
           [f"UPDATE invoices SET billing_state = 'UT' WHERE invoice_id = {inv[0]}"]),
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    assert report.total("write-leaves-row-inconsistent") == 2, report.examples


def test_writes_keep_rows_consistent_and_swaps_name_their_group(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    tasks = write_tasks(lake, [], v, random.Random(0), 60)
    report = audit_tasks(tasks, lake, v)
    assert report.total("write-leaves-row-inconsistent") == 0, report.examples
    assert len(tasks) >= 30
    for t in tasks:
        if len(t.gold_actions) == 2:
            assert " values of " not in t.utterance, t.utterance
            assert not re.search(r"\bin [\w ]+ ID\b", t.utterance), t.utterance
            assert re.match(r"(Among|For) the \w+ (of|whose) ", t.utterance), t.utterance


def test_no_layer_emits_a_doubled_noun() -> None:
    assert (
        doubled_noun("Send the address of the address with district X.") == "address of the address"
    )
    assert doubled_noun('Send the address of "the address" to me.') is None
    made = Made("Print the address of the address whose district is X.", "unanswerable")
    assert fill(1, [lambda: made], set(), budget=3) == []
    ok = Made("Print the address whose district is X.", "unanswerable")
    assert fill(1, [lambda: ok], set(), budget=3) == [ok]


def test_drafted_questions_say_per_customer_and_list_names(db: Path) -> None:
    lake, v = _lake(db), Verifier(db)
    cx = DraftContext(lake, v, random.Random(0))
    questions = []
    for cell in makers(cx).values():
        for make in cell:
            for _ in range(4):
                d = make()
                if d is not None:
                    questions.append(d.question)
    j = next(j for j in lake.joins if j.left == ("invoices", "customer_id"))
    fk, key = (
        lake.table("invoices").column("customer_id"),
        lake.table("customers").column("customer_id"),
    )
    cx = DraftContext(lake, v, random.Random(0))  # (a fresh one: no narrowing filter drawn)
    above = _j_above(cx, j, fk, key, [lake.table("customers").column("email")])
    assert above is not None, cx.rejected[-3:]
    questions.append(above.question)
    text = "\n".join(questions)
    assert "twice the average number of invoices per customer?" in text, text
    assert re.search(r"For each [\w ]+, which (invoice|customer)\b", text), text
    assert not re.search(r"per (genres|tracks|invoices|customers)\b", text), text
    assert not re.search(r"\b\w+s row\b", text), text
    assert "media type IDs" not in text and "genre IDs" not in text, text


def test_no_person_attribute_is_asked_of_a_table_of_ensembles(tmp_path: Path) -> None:
    from clarisql.envs.synth.layers.unanswerable import _UnansGen

    path = tmp_path / "music.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE artists (artist_id INTEGER PRIMARY KEY, name TEXT);"
        "CREATE TABLE singers (singer_id INTEGER PRIMARY KEY, name TEXT);"
    )
    solo = [f"{a} {b}" for a in FIRST for b in LAST][:60]
    groups = ["Choir Of Westminster Abbey & Simon Preston", "Berliner Philharmoniker",
              "Santana Feat. Everlast", "AC/DC", "Emerson String Quartet"]  # fmt: skip
    conn.executemany("INSERT INTO artists VALUES (?, ?)", enumerate(solo[:40] + groups, 1))
    conn.executemany("INSERT INTO singers VALUES (?, ?)", enumerate(solo, 1))
    conn.commit()
    conn.close()
    lake = _lake(path)
    gen = _UnansGen(lake, Verifier(path), random.Random(0))
    assert gen.cue_of(lake.table("artists"))[0] == "thing"  # ensembles too: no salary asked
    assert gen.cue_of(lake.table("singers"))[0] == "person"
    for _ in range(40):
        for make in (gen.column_related, gen.column_unrelated):
            m = make()
            assert m is None or "artist" not in m.utterance, m.utterance


def test_join_lists_name_rows_not_a_third_tables_ids(db: Path) -> None:
    from clarisql.envs.synth.answerable_join import join_makers

    lake, v = _lake(db), Verifier(db)
    cx = DraftContext(lake, v, random.Random(1))
    listed = []
    for make in join_makers(cx)["simple"]:
        for _ in range(30):
            d = make()
            if d is not None:
                listed.append((d.sql, d.question))
    # (the invoices have no name and no date: no listing of their bare keys, so none may be
    # here; tests/test_synth_wording_gate.py lists rentals by key and date)
    for sql, q in listed:
        col = re.search(r'SELECT DISTINCT "(\w+)"\."(\w+)"', sql)
        if col is None:  # rows with no name of their own: their key beside a date
            keyed = re.match(r'SELECT "(\w+)"\."(\w+)", "\w+"\."(\w+)" FROM', sql)
            assert keyed and lake.table(keyed[1]).column(keyed[2]).unique, sql
            assert lake.table(keyed[1]).column(keyed[3]).kind == "date", sql
            continue
        t, c = col.groups()
        assert not (c.endswith("_id") and not lake.table(t).column(c).unique), q
        if t == "tracks":
            assert c == "name", q  # a name where the rows have one, not their key


def test_a_row_listing_the_same_thing_blocks_the_change(tmp_path: Path) -> None:
    # the same song on a studio and a live album: changing one's composer leaves the other
    # contradicting it; a song listed once, or listed with another composer, is free
    path = tmp_path / "songs.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE track (track_id INTEGER PRIMARY KEY, name TEXT, composer TEXT)")
    # (more rows than a verdict query returns: the twins are read past its row cap)
    rows = [(i, f"Song {i}", f"Writer {i % 7}") for i in range(1, 401)]
    rows += [(401, "song 3!", "Writer 3"), (402, "Song 5", "Someone Else")]
    conn.executemany("INSERT INTO track VALUES (?, ?, ?)", rows)
    conn.commit()
    conn.close()
    lake = profile_lake(path)
    t = lake.table("track")
    v = Verifier(path)
    try:
        deps = Dependencies(v)
        row = {"track_id": 3, "name": "Song 3", "composer": "Writer 3"}
        why = deps.breaks_dependency(t, row, "composer", "Writer 4", "track_id")
        assert why and "Song 3" in why
        lone = {"track_id": 4, "name": "Song 4", "composer": "Writer 4"}
        assert deps.twin_row(t, lone, "composer", "track_id", [4]) is None
        other = {"track_id": 5, "name": "Song 5", "composer": "Writer 5"}
        assert deps.twin_row(t, other, "composer", "track_id", [5]) is None
        # a swap's other row is left out: swapping with the twin itself is no contradiction
        assert deps.twin_row(t, row, "composer", "track_id", [3, 401]) is None
        # the name itself: another row called so keeps it (folded: case and punctuation)
        assert deps.twin_row(t, row, "name", "track_id", [3])
        assert deps.twin_row(t, lone, "name", "track_id", [4]) is None
        # a credit sharing a person agrees: "Writer 3/Someone" is "Writer 3" (folded lasts)
        assert shares_person("Ann Writer/Bob Dylan", "Dylan") and not shares_person("A", "B")
    finally:
        v.close()


def test_a_number_keeps_its_order_with_the_rows_it_refers_to(tmp_path: Path) -> None:
    # every payment is at least the rate of the film it pays for (through the rental): a point
    # update below it is refused; the check needs the lake's joins
    path = tmp_path / "rent.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE film (film_id INTEGER PRIMARY KEY, title TEXT, rental_rate REAL);
        CREATE TABLE rental (rental_id INTEGER PRIMARY KEY,
                             film_id INTEGER REFERENCES film(film_id), rented TEXT);
        CREATE TABLE payment (payment_id INTEGER PRIMARY KEY,
                              rental_id INTEGER REFERENCES rental(rental_id), amount REAL);
        """
    )
    rates = [0.99, 2.99, 4.99]
    for i in range(1, 31):
        conn.execute("INSERT INTO film VALUES (?, ?, ?)", (i, f"Film {i}", rates[i % 3]))
    for i in range(1, 301):
        film = 1 + i % 30
        conn.execute("INSERT INTO rental VALUES (?, ?, ?)", (i, film, f"2005-05-{1 + i % 28:02d}"))
        rate = rates[film % 3]
        conn.execute("INSERT INTO payment VALUES (?, ?, ?)", (i, i, rate + (i % 4)))
    conn.commit()
    conn.close()
    lake = discover(profile_lake(path))
    v = Verifier(path)
    try:
        t = lake.table("payment")
        row = {"payment_id": 7, "rental_id": 7, "amount": 2.99 + 3}  # (film 8: rate 4.99)
        deps = Dependencies(v, lake)
        assert deps.breaks_order(t, row, "amount", 1.99)  # (below the film's 4.99)
        assert deps.breaks_order(t, row, "amount", 5.99) is None
        assert Dependencies(v).breaks_order(t, row, "amount", 1.99) is None  # (no joins known)
    finally:
        v.close()
