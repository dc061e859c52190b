"""Probes for what a reviewer found and the machine audit missed, each tested on a planted case
it must catch (a probe that reports 0 may be blind), and the generator fixes behind them: swaps
only inside a group, no arbitrary number over a range of rows, no write to a total of other
rows, listed answers that tell their rows apart, declared keys whatever their names, and small
lookup tables kept."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from clarisql.envs.synth.audit import FLAWS, audit_tasks, credit_list, foreign_words
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import write_tasks
from clarisql.envs.synth.layers.writes import derived_columns
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

WRITERS = ("Eddie Vedder", "Mike Patton", "Jerry Cantrell", "Layne Staley", "Nikki Sixx",
           "Mick Mars", "Tommy Lee", "Bill Gould", "Mike Bordin", "Freddie Mercury")  # fmt: skip
CITIES = ("Sidney", "Perth", "Hobart", "Darwin")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sense") / "shop.sqlite"
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE albums (album_id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE tracks (track_id INTEGER PRIMARY KEY, name TEXT,
                             album_id INTEGER REFERENCES albums(album_id), composer TEXT,
                             genre TEXT, milliseconds INTEGER, bytes INTEGER, unit_price REAL);
        CREATE TABLE invoices (invoice_id INTEGER PRIMARY KEY, billing_city TEXT,
                               billing_state TEXT, total REAL,
                               customer_id INTEGER REFERENCES customers(customer_id),
                               billing_address TEXT);
        CREATE TABLE invoice_items (line_id INTEGER PRIMARY KEY,
                                    invoice_id INTEGER REFERENCES invoices(invoice_id),
                                    track_id INTEGER REFERENCES tracks(track_id),
                                    unit_price REAL, quantity INTEGER);
        CREATE TABLE adressen (adresse_id INTEGER PRIMARY KEY, stadt TEXT, zeile_1 TEXT);
        CREATE TABLE schueler (student_id INTEGER PRIMARY KEY,
                               aktuelle_adresse INTEGER REFERENCES adressen(adresse_id),
                               vorname TEXT, handynummer TEXT);
        CREATE TABLE media_types (media_type_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT,
                                country TEXT);
        """
    )
    for a in range(1, 21):
        conn.execute("INSERT INTO albums VALUES (?, ?)", (a, f"Album {a:02d}"))
    for t in range(1, 201):
        k = rng.randint(1, 3)
        composer = rng.choice(WRITERS) if k == 1 else "/".join(rng.sample(WRITERS, k))
        conn.execute(
            "INSERT INTO tracks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (t, f"Song {t:03d}", (t - 1) // 10 + 1, composer, rng.choice(["Rock", "Jazz", "Pop"]),
             rng.randint(100_000, 400_000), rng.randint(2_000_000, 9_000_000),
             rng.choice([0.99, 1.29, 1.99])),
        )  # fmt: skip
    line = 0
    for i in range(1, 61):
        total = 0.0
        for _ in range(rng.randint(1, 4)):
            line += 1
            price, qty = rng.choice([0.99, 1.99]), rng.randint(1, 2)
            total += price * qty
            conn.execute(
                "INSERT INTO invoice_items VALUES (?, ?, ?, ?, ?)",
                (line, i, rng.randint(1, 200), price, qty),
            )
        conn.execute(
            "INSERT INTO invoices VALUES (?, ?, ?, ?, ?, ?)",
            (
                i,
                CITIES[i % 4],
                ["NSW", "WA", "TAS", "NT"][i % 4],
                round(total, 2),
                i % 40 + 1,
                f"{i % 40 + 1} Harbour Road",
            ),
        )
    for a in range(1, 16):
        conn.execute("INSERT INTO adressen VALUES (?, ?, ?)", (a, f"Port {a}", f"Weg {a}"))
    for s in range(1, 16):
        conn.execute(
            "INSERT INTO schueler VALUES (?, ?, ?, ?)",
            (s, (s % 9) + 1, f"Kind {s}", f"(0{s:02d}) 555-01{s:02d}"),
        )
    for m, name in enumerate(["MPEG", "AAC", "WAV", "FLAC", "OGG"], 1):
        conn.execute("INSERT INTO media_types VALUES (?, ?)", (m, name))
    for c in range(1, 41):  # first names repeat: they cannot tell customers apart
        conn.execute(
            "INSERT INTO customers VALUES (?, ?, ?)",
            (c, ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay"][c % 6],
             ["Chile", "Peru", "Cuba", "Togo"][c % 4]),
        )  # fmt: skip
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="module")
def lake(db: Path):
    return discover(profile_lake(db))


def _w(i: int, q: str, acts: list[str]) -> Task:
    return Task(id=f"w{i}", db="shop.sqlite", utterance=q, category="write", writable=True,
                gold_actions=acts, instruction=q)  # fmt: skip


def test_each_probe_catches_the_reviewers_pattern(db: Path, lake) -> None:
    v = Verifier(db, max_rows=5000)
    rows = dict(sqlite3.connect(db).execute("SELECT track_id, bytes FROM tracks"))
    names = dict(sqlite3.connect(db).execute("SELECT track_id, name FROM tracks"))
    composer = (
        sqlite3.connect(db)
        .execute("SELECT composer FROM tracks WHERE composer LIKE '%/%/%' LIMIT 1")
        .fetchone()[0]
    )
    first = composer.split()[0]
    tasks = [
        Task(id="r1", db="shop.sqlite", category="well-specified",
             utterance='List the billing city of every invoice whose billing state is "NSW".',
             gold_sql="SELECT billing_city FROM invoices WHERE billing_state = 'NSW'"),
        Task(id="r2", db="shop.sqlite", category="where",
             utterance=f'I need the name of the track whose composer is "{first}".',
             gold_sql=f"SELECT name FROM tracks WHERE composer = '{composer}'",
             underspecs=[Underspec(Label("not-exist", first, "composer"), composer)]),
        Task(id="r3", db="shop.sqlite", utterance='I need the handynummer of the adressen whose '
             'stadt is "Port 3".', answerable=False, unanswerable_kind="column-surface",
             category="unanswerable:column-surface",
             metadata={"requested": "handynummer", "tables": ["adressen"]}),
        _w(4, "Please exchange the bytes of tracks 5 and 150 (track ID).", [
            f"UPDATE tracks SET bytes = {rows[150]} WHERE track_id = 5",
            f"UPDATE tracks SET bytes = {rows[5]} WHERE track_id = 150"]),
        _w(5, "Within the one billing state I mean, change the total of all its invoices with "
           "a total below 1.98 to 1.43.",
           ["UPDATE invoices SET total = 1.43 WHERE billing_state = 'WA' AND total < 1.98"]),
        Task(id="r6", db="shop.sqlite", category="from",
             utterance="I'd like to know the total of the total of the invoices.",
             gold_sql="SELECT SUM(total) FROM invoices"),
        # not flaws: a swap inside one album, a name listed with its rows told apart
        _w(7, "The names of tracks 5 and 6 of album 1 were entered the wrong way round.", [
            f"UPDATE tracks SET name = '{names[6]}' WHERE track_id = 5",
            f"UPDATE tracks SET name = '{names[5]}' WHERE track_id = 6"]),
        Task(id="r8", db="shop.sqlite", category="well-specified",
             utterance='List the name of every track on album 2.',
             gold_sql="SELECT name FROM tracks WHERE album_id = 2"),
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    got = {f: report.total(f) for f in FLAWS if report.total(f)}
    got.pop("non-english-identifier", None)  # (handynummer: wordfreq's, tested below)
    assert got == {
        "write-row-not-identified": 1,  # the range update names no row either
        "listed-answer-without-identifier": 1,
        "list-column-as-category": 1,
        "unanswerable-with-matching-column": 1,
        "swap-between-unrelated-rows": 1,
        "bulk-update-to-one-value": 1,
        "write-breaks-derived-total": 1,
        "doubled-noun": 1,
        "raw-column-token": 1,  # (handynummer is no English word either)
    }, report.examples


def test_credit_lists_and_foreign_words_are_told_by_their_values() -> None:
    credits = ["Bill Gould/Mike Bordin/Mike Patton", "Mike Patton", "Jerry Cantrell, Layne "
               "Staley & Mike Bordin", "Bill Gould/Mike Patton/Layne Staley", "Layne Staley",
               "Jerry Cantrell/Bill Gould/Mike Bordin"]  # fmt: skip
    assert credit_list(credits)
    assert not credit_list(["Mercury, Freddie", "Gould, Bill", "Patton, Mike", "Staley, Layne"])
    assert not credit_list(["Rock", "Jazz", "Pop", "Hip Hop/Rap", "Alternative & Punk"])
    pytest.importorskip("wordfreq")
    found = foreign_words(["stadt", "zeile", "abschrift", "land", "suite", "billing", "invoice"])
    assert found == {"stadt", "zeile", "abschrift"}


def test_non_english_identifiers_in_a_question_are_counted(db: Path, lake) -> None:
    pytest.importorskip("wordfreq")
    v = Verifier(db, max_rows=5000)
    tasks = [
        Task(id="g1", db="shop.sqlite", category="well-specified",
             utterance='What is the stadt of the adressen whose zeile 1 is "Weg 3"?',
             gold_sql="SELECT stadt FROM adressen WHERE zeile_1 = 'Weg 3'"),
        Task(id="g2", db="shop.sqlite", category="well-specified",
             utterance='What is the city of the address whose "stadt" is "Port 3"?',
             gold_sql="SELECT stadt FROM adressen WHERE stadt = 'Port 3'"),
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    assert report.total("non-english-identifier") == 1, report.examples


def test_declared_keys_join_whatever_their_names_and_small_lookups_are_kept(lake) -> None:
    pairs = {(j.left, j.right) for j in lake.joins}
    # 9 addresses in 15 students: OrQA-low-information, and still how students reach addresses
    assert (("schueler", "aktuelle_adresse"), ("adressen", "adresse_id")) in pairs
    # five media types, each its own name: a lookup table, not junk
    assert [c.name for c in lake.table("media_types").usable()] == ["media_type_id", "name"]


def test_derived_totals_are_found_on_the_data(db: Path, lake) -> None:
    v = Verifier(db, max_rows=5000)
    assert derived_columns(lake, v) == {
        ("invoices", "total"),
        ("invoice_items", "unit_price"),
        ("invoice_items", "quantity"),
    }


def test_write_tasks_a_reviewer_would_keep(db: Path, lake) -> None:
    v = Verifier(db, max_rows=5000)
    tasks = write_tasks(lake, [], v, random.Random(0), 40)
    report = audit_tasks(tasks, lake, v)
    for f in ("swap-between-unrelated-rows", "bulk-update-to-one-value",
              "write-breaks-derived-total", "write-row-not-identified"):  # fmt: skip
        assert report.total(f) == 0, report.examples[f]
    swaps = [t for t in tasks if len(t.gold_actions) == 2]
    assert swaps, "no swap made"
    golds = [frozenset(t.gold_actions) for t in swaps]
    assert len(golds) == len(set(golds))  # a swap is not made twice in other words
    for t in swaps:  # tracks: neighbours of one album, told in the request; never a measure
        assert "bytes" not in t.utterance and "milliseconds" not in t.utterance, t.utterance
        assert '"tracks"' not in t.gold_actions[0] or "album" in t.utterance, t.utterance
    for t in tasks:
        for a in t.gold_actions:
            tree = sqlglot.parse_one(a, read="sqlite")
            if isinstance(tree, exp.Update):
                set_cols = {e.this.name for e in tree.expressions}
                assert not set_cols & {"total", "quantity"}, a
                if tree.this.name == "invoice_items":
                    assert "unit_price" not in set_cols, a
            if isinstance(tree, exp.Insert):
                assert tree.this.this.name not in ("invoices", "invoice_items"), a


def test_listed_answers_tell_their_rows_apart(db: Path, lake) -> None:
    from clarisql.envs.synth.answerable import make_drafts

    v = Verifier(db, max_rows=5000)
    drafts = make_drafts(lake, v, random.Random(0), 150)
    plain = 0
    for d in drafts:
        tree = sqlglot.parse_one(d.sql, read="sqlite")
        if not isinstance(tree, exp.Select) or len(d.rows) < 2:
            continue
        if tree.args.get("distinct") or tree.args.get("group"):
            continue
        if any(e.find(exp.AggFunc) for e in tree.expressions):
            continue
        plain += 1
        assert len({tuple(r) for r in d.rows}) == len(d.rows), (d.question, d.sql)
    assert plain, "no listing drafted"


def test_a_suite_of_this_database_has_none_of_these_flaws(db: Path, tmp_path: Path) -> None:
    from clarisql.envs.synth.audit import audit_folder
    from clarisql.envs.synth.pipeline import SynthConfig, synthesize

    res = synthesize(SynthConfig(sources=[db], out=tmp_path / "s", tasks=120, seed=1))
    report, _ = audit_folder(res.tasks_path.parent)
    owned = ("listed-answer-without-identifier", "swap-between-unrelated-rows",
             "bulk-update-to-one-value", "write-breaks-derived-total",
             "unanswerable-with-matching-column", "list-column-as-category")  # fmt: skip
    assert {f: report.total(f) for f in owned} == dict.fromkeys(owned, 0), report.examples


def test_ranked_ties_list_the_key_beside_a_shared_name(db: Path, lake) -> None:
    from clarisql.envs.synth.answerable_join import _j_rank
    from clarisql.envs.synth.drafting import DraftContext

    v = Verifier(db, max_rows=5000)
    j = next(j for j in lake.joins if j.left == ("invoices", "customer_id"))
    fk = lake.table("invoices").column("customer_id")
    key = lake.table("customers").column("customer_id")
    name = lake.table("customers").column("first_name")
    made = 0
    for seed in range(6):
        d = _j_rank(DraftContext(lake, v, random.Random(seed)), j, fk, key, [name])
        if d is None:
            continue
        made += 1
        # first names repeat among the tied customers: the key tells them apart
        assert len({tuple(r) for r in d.rows}) == len(d.rows), (d.question, d.rows)
        assert "customer ID" in d.question
    assert made


def test_an_unanswerable_twin_tells_its_rows_apart(db: Path, lake) -> None:
    from clarisql.envs.synth.layers.unanswerable import _UnansGen

    v = Verifier(db, max_rows=5000)
    twins = []
    for seed in range(40):
        gen = _UnansGen(lake, v, random.Random(seed))
        for t in ("customers", "invoices", "tracks"):
            made = gen.attr_task("column-related", lake.table(t), "shoe size", {})
            twin = made.meta.get("twin") if made is not None else None
            if twin:
                twins.append(twin)
    assert twins
    for tw in twins:
        rows = v.rows(tw["gold_sql"]) or []
        assert len({tuple(r) for r in rows}) == len(rows), (tw["utterance"], rows)
