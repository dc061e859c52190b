"""Write tasks leave no orphans under any reference (declared foreign keys discovery does not keep
included), inserts are new rows rather than copies, a suite holds one task per gold, and a name
clarification never aggregates over the one row a name stands for."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import clarify_tasks, write_tasks
from clarisql.envs.synth.layers.common import sql_lit
from clarisql.envs.synth.layers.writes import _WriteGen
from clarisql.envs.synth.pipeline import _gold_key
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task

COLOURS = ("blue", "black", "yellow", "red", "green")
KINDS = ("jeans", "topping", "scarf", "mug")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("refs") / "shop.sqlite"
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE region (region_id INTEGER PRIMARY KEY, label TEXT);
        CREATE TABLE products (product_id INTEGER PRIMARY KEY, product_name TEXT,
                               kind TEXT, price REAL, weight REAL);
        -- only two distinct parents: too few for discovery to propose a join; declared all the same
        CREATE TABLE suppliers (supplier_id INTEGER PRIMARY KEY, product_id INTEGER
                                REFERENCES products(product_id) ON DELETE RESTRICT, fee REAL);
        -- a two-column key into a two-column parent
        CREATE TABLE shelf (aisle INTEGER, slot INTEGER, note TEXT, PRIMARY KEY (aisle, slot));
        CREATE TABLE stock (stock_id INTEGER PRIMARY KEY, aisle INTEGER, slot INTEGER, qty REAL,
                            FOREIGN KEY (aisle, slot) REFERENCES shelf(aisle, slot));
        -- a table referring to itself
        CREATE TABLE staff (staff_id INTEGER PRIMARY KEY, boss_id INTEGER REFERENCES staff,
                            pay REAL, shift TEXT);
        -- a seat names its ticket although one seat was sold twice: a copy is a second sale
        CREATE TABLE tickets (ticket_id INTEGER PRIMARY KEY, seat TEXT, hall TEXT, price REAL);
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, at TEXT, desk TEXT, fee REAL);
        CREATE TABLE orders (order_id INTEGER PRIMARY KEY, buyer_name TEXT, amount REAL,
                             channel TEXT, year INTEGER);
        """
    )
    for r in range(1, 6):
        conn.execute("INSERT INTO region VALUES (?, ?)", (r, f"Region {r}"))
    pid = 0
    for c in COLOURS:
        for k in KINDS:
            pid += 1
            conn.execute(
                "INSERT INTO products VALUES (?, ?, ?, ?, ?)",
                (pid, f"{c} {k}", k, round(rng.uniform(5, 900), 2), round(rng.uniform(1, 9), 1)),
            )
    for s in range(1, 9):
        conn.execute("INSERT INTO suppliers VALUES (?, ?, ?)", (s, 1 + s % 2, 10.0 * s))
    for a in range(1, 5):
        for s in range(1, 5):
            conn.execute("INSERT INTO shelf VALUES (?, ?, ?)", (a, s, f"shelf {a}-{s}"))
    for i in range(1, 7):
        conn.execute("INSERT INTO stock VALUES (?, ?, ?, ?)", (i, 1, i % 3 + 1, 2.0 * i))
    for i in range(1, 21):
        conn.execute(
            "INSERT INTO staff VALUES (?, ?, ?, ?)",
            (i, None if i <= 3 else 1 + i % 3, round(rng.uniform(900, 3000), 2), rng.choice("AB")),
        )
    for i in range(1, 31):
        seat = f"Row {1 + i // 6} seat {i % 6}" if i != 30 else "Row 1 seat 1"
        hall = "North" if i % 2 else "South"
        conn.execute("INSERT INTO tickets VALUES (?, ?, ?, ?)", (i, seat, hall, 5.0 + i))
    for i in range(1, 41):  # every visit at its own moment: a new visit is a later one
        at = f"2024-03-{1 + i % 28:02d} {8 + i % 9:02d}:{i:02d}:00"
        conn.execute("INSERT INTO visits VALUES (?, ?, ?, ?)", (i, at, "AB"[i % 2], 2.5 * i))
    first = ("Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana")
    last = ("Moreau", "Novak", "Okafor", "Perez", "Quinn", "Rossi", "Sato", "Tanaka")
    buyers = [f"{f} {s}" for f in first for s in last]  # many names, most on a few orders
    for i in range(1, 101):
        conn.execute(
            "INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
            (
                i,
                rng.choice(buyers),
                round(rng.uniform(5, 500), 2),
                rng.choice(["web", "shop"]),
                2024 if i == 100 else rng.choice([2021, 2022, 2023]),
            ),  # 2024: one order
        )
    conn.commit()
    conn.close()
    return path


def test_no_delete_leaves_an_orphan_under_a_declared_key(db: Path) -> None:
    lake = discover(profile_lake(db))
    v = Verifier(db)
    try:
        gen = _WriteGen(lake, v, random.Random(0))
        rows = lambda t: {  # noqa: E731
            r[0] for r in v.rows(f'SELECT rowid FROM "{t}" WHERE {gen.unreferenced(lake.table(t))}')
        }
        # the references discovery does not keep are checked all the same
        assert not rows("products") & {1, 2}
        assert len(rows("products")) == 18
        assert rows("shelf") == set(range(1, 17)) - {2, 3, 1}  # (1,1) (1,2) (1,3) are held
        assert rows("staff") == set(range(1, 21)) - {1, 2, 3}  # the bosses are held
        tasks = []
        for seed in range(6):
            tasks += write_tasks(lake, [], v, random.Random(seed), 20)
        deletes = [a for t in tasks for a in t.gold_actions if a.startswith("DELETE")]
        assert deletes
        conn = sqlite3.connect(db)
        try:
            for act in deletes:
                conn.execute("SAVEPOINT s")
                conn.execute(act)
                assert conn.execute("PRAGMA foreign_key_check").fetchall() == [], act
                conn.execute("ROLLBACK TO s")
        finally:
            conn.close()
    finally:
        v.close()


def test_an_insert_is_never_a_copy_of_a_row(db: Path) -> None:
    lake = discover(profile_lake(db))
    v = Verifier(db)
    try:
        gen = _WriteGen(lake, v, random.Random(0))
        made = later = 0
        for seed in range(40):
            gen.rng = random.Random(seed)
            for t, k in gen.keyed():
                got = gen.new_row(t, k)
                if got is None:
                    continue
                assert t.name != "tickets", got
                if t.name == "visits":
                    at = dict(zip([c.name for c in got[0]], got[1]))["at"]
                    later += at > "2024-03-28 23:59:59"
                made += 1
                cols, vals = got
                same = [(c.name, x) for c, x in zip(cols, vals, strict=True) if c.name != k.name]
                w = " AND ".join(f'"{c}" IS {sql_lit(x)}' for c, x in same)
                n = v.rows(f'SELECT COUNT(*) FROM "{t.name}" WHERE {w}')
                assert n is not None and n[0][0] == 0, (t.name, same)
        assert made >= 10
        assert later  # a near-unique moment is stated as a new one, after the latest
    finally:
        v.close()


def _write(id_: str, text: str, action: str) -> Task:
    return Task(
        id=id_, db="x", utterance=text, category="write", gold_actions=[action], writable=True
    )


def test_one_task_per_gold() -> None:
    a = _write("a", "Delete city 3.", "D 3")
    b = _write("b", "Remove city 3.", "D 3")
    c = _write("c", "Remove city 4.", "D 4")
    u = Task(
        id="u",
        db="x",
        utterance="Who?",
        category="unanswerable:out-of-domain",
        answerable=False,
        unanswerable_kind="out-of-domain",
    )
    assert _gold_key(a) == _gold_key(b) != _gold_key(c)
    assert _gold_key(u) is None


_AGG = re.compile(r"\b(COUNT|SUM|AVG|MIN|MAX)\s*\(", re.I)


def _value_clarifications(db: Path):
    lake = discover(profile_lake(db))
    v = Verifier(db)
    try:
        for seed in range(6):
            for t in clarify_tasks(lake, [], v, random.Random(seed), 30):
                kinds = {getattr(us.label, "kind", us.label) for us in t.underspecs}
                if kinds & {"not-exist", "Unmatch", "Error"}:
                    m = re.search(r"FROM (.*?)(?: GROUP BY|$)", t.gold_sql or "", re.S)
                    assert m, t.gold_sql
                    n = v.rows(f"SELECT COUNT(*) FROM {m.group(1)}")
                    assert n is not None
                    yield t, n[0][0]
    finally:
        v.close()


def test_a_value_clarification_aggregates_over_many_rows(db: Path) -> None:
    named = 0
    for t, n in _value_clarifications(db):
        if not _AGG.search(t.gold_sql or ""):
            continue  # a singular lookup (below)
        named += 1
        # a unique product name is one product: "the products named 'blue'" means every blue
        # product, a reading that needs no clarification
        assert n >= 2, (t.utterance, t.gold_sql)
    assert named  # buyer names repeat over orders: those clarifications are still made


def test_a_single_entity_value_clarification_is_a_singular_lookup(db: Path) -> None:
    """ODUTQA-MDC's core case: a cut-off or misspelled name that fits several entities, each
    one row (product names are unique here). The task is made, and it asks for an attribute of
    *the* entity, never an aggregate over its one row."""
    lookups = []
    for t, n in _value_clarifications(db):
        if n < 2:  # the gold filter passes one row: the readings are distinct entities
            assert not _AGG.search(t.gold_sql or ""), (t.utterance, t.gold_sql)
            assert t.metadata["recipe"] == "where:lookup", t.metadata
            assert n == 1, (t.utterance, t.gold_sql)  # a filter no row passes is no task
            lookups.append(t)
    assert any("products" in (t.gold_sql or "") for t in lookups), [t.utterance for t in lookups]
    for t in lookups:
        words = t.utterance.lower()
        assert not re.search(
            r"\b(average|total|sum|lowest|highest|minimum|maximum|how many)\b", words
        )
        table = t.metadata["tables"][0]
        subj = {"products": "product", "orders": "order"}.get(table, table)
        assert re.search(rf"\bthe {subj}\b", words), t.utterance  # singular subject
        assert not re.search(rf"\b{subj}s\b", words), t.utterance
        (us,) = t.underspecs
        assert us.label.kind == "not-exist" and us.label.content in t.utterance
