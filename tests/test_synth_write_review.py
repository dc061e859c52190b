"""Write tasks a reviewer would keep: rows named by a key or a unique natural key (never by a
birthplace), no misspelling only one value is near, deletes that leave no orphans, new numbers
near the old ones, and "which table?" inserts whose values do not tell the table."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import write_tasks
from clarisql.envs.synth.layers.writes import natural_keys, reveals_table, unique_nearest
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier

FIRST = ("Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lena")
LAST = ("Moreau", "Novak", "Okafor", "Perez", "Quinn", "Rossi", "Sato", "Tanaka")
TOWNS = tuple(f"{a} {b}" for a in ("Big", "Red", "Old", "New", "Clear", "Stone", "Maple", "Oak")
              for b in ("River", "Hill", "Falls", "Bridge", "Water"))  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("writes") / "people.sqlite"
    rng = random.Random(5)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE people (person_id INTEGER PRIMARY KEY, full_name TEXT, birth_city TEXT,
                             height REAL, savings REAL, death_day INTEGER);
        CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, person_id INTEGER
                             REFERENCES people(person_id), fee REAL, ward TEXT,
                             last_update TEXT, email TEXT);
        CREATE TABLE genres (genre_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE sales_2022 (sale_day TEXT, store TEXT, amount REAL, units INTEGER);
        CREATE TABLE sales_2023 (sale_day TEXT, store TEXT, amount REAL, units INTEGER);
        CREATE TABLE sales_2024 (sale_day TEXT, store TEXT, amount REAL, units INTEGER);
        """
    )
    names = [f"{f} {s}" for f in FIRST for s in LAST]
    rng.shuffle(names)
    for i, n in enumerate(names, 1):
        conn.execute(
            "INSERT INTO people VALUES (?, ?, ?, ?, ?, ?)",
            (i, n, rng.choice(TOWNS), round(rng.uniform(150, 200), 1), round(rng.lognormvariate(8, 2), 2),
             rng.randint(1, 28)),
        )  # fmt: skip
    for v in range(1, 121):  # half the people have visits
        conn.execute(
            "INSERT INTO visits VALUES (?, ?, ?, ?, ?, ?)",
            (v, rng.randint(1, len(names) // 2), round(rng.uniform(20, 400), 2),
             rng.choice(["North", "South", "East"]), "2006-02-15 22:12:37",
             f"desk{v}@example.org"),
        )  # fmt: skip
    for g in range(1, 31):
        conn.execute("INSERT INTO genres VALUES (?, ?)", (g, f"Genre {g % 12}"))
    for year in (2022, 2023, 2024):
        for _ in range(60):
            conn.execute(
                f"INSERT INTO sales_{year} VALUES (?, ?, ?, ?)",
                (f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                 rng.choice(["Avon", "Bree", "Corin", "Dale"]), round(rng.uniform(5, 500), 2),
                 rng.randint(1, 40)),
            )  # fmt: skip
    conn.commit()
    conn.close()
    return path


def _where_columns(sql: str) -> set[str]:
    tree = sqlglot.parse_one(sql, read="sqlite")
    where = tree.args.get("where")
    return {c.name for c in where.find_all(exp.Column)} if where else set()


def test_the_predicates(db: Path) -> None:
    lake = discover(profile_lake(db))
    assert [c.name for c in natural_keys(lake.table("people"))] == ["full_name"]
    assert natural_keys(lake.table("visits")) == []  # a ward is no name
    assert unique_nearest("Big Rivr", "Big River", list(TOWNS))
    assert not unique_nearest("Ada Novk", "Ada Novak", ["Ada Novak", "Ada Nova", "Ben Novak"])
    v = Verifier(db)
    try:
        others = ["sales_2023", "sales_2024"]
        assert reveals_table(v, "sales_2022", others, "sale_day", "2022-05-05")
        assert not reveals_table(v, "sales_2022", others, "store", "Avon")
        assert not reveals_table(v, "sales_2022", others, "units", 7)
    finally:
        v.close()


def test_write_tasks_a_reviewer_keeps(db: Path) -> None:
    lake = discover(profile_lake(db))
    v = Verifier(db)
    try:
        tasks = []
        for seed in range(4):
            tasks += write_tasks(lake, [], v, random.Random(seed), 30)
        referenced = {r[0] for r in v.rows("SELECT DISTINCT person_id FROM visits") or []}
        savings = {r[0]: r[1] for r in v.rows("SELECT person_id, savings FROM people") or []}
        kinds = set()
        for t in tasks:
            for act in t.gold_actions:
                if act.startswith(("UPDATE", "DELETE")):
                    # rows are named by a key or a natural key, never by where someone was born
                    assert "birth_city" not in _where_columns(act), (t.utterance, act)
                m = re.fullmatch(r'DELETE FROM "people" WHERE "person_id" = (\d+)', act)
                if m:
                    kinds.add("delete")
                    assert int(m.group(1)) not in referenced, t.utterance  # no orphan visits
                m = re.fullmatch(
                    r'UPDATE "people" SET "savings" = ([\d.]+) WHERE "person_id" = (\d+)', act
                )
                if m and len(t.gold_actions) == 1:  # (a swap takes the other row's value)
                    kinds.add("update")
                    new, old = float(m.group(1)), savings[int(m.group(2))]
                    assert 0.5 * old <= new <= 1.5 * old, t.utterance
                # never one arbitrary number over a range of rows ("... below 1.98 to 1.43")
                assert not re.fullmatch(r"UPDATE .* = [\d.]+ WHERE .* < [\d.]+", act), act
                m = re.fullmatch(
                    r'UPDATE "(\w+)" SET "(\w+)" = ROUND\("\2" \* ([\d.]+), 2\) .*', act
                )
                if m and t.underspecs:  # a scope write: a price raised or lowered by a share
                    kinds.add("scope")
                    assert 0.75 <= float(m.group(3)) <= 1.25 and "percent" in t.utterance
            for u in t.underspecs:
                if u.label.slot == "table":
                    kinds.add("family")
                    # the stated values do not give the table away (no day of its year)
                    assert not re.search(r"20\d\d-\d\d-\d\d", t.utterance), t.utterance
                if u.label.kind == "not-exist":
                    kinds.add("name")
                    assert u.label.slot == "full_name", t.utterance
        assert {"delete", "family", "name", "update", "scope"} <= kinds, kinds
        inserts = [a for t in tasks for a in t.gold_actions if a.startswith("INSERT")]
        assert any(a.startswith('INSERT INTO "visits"') for a in inserts)
        # no value the database sets itself, no copy of a lone name or of another row's e-mail
        assert not any("last_update" in a or '"genres"' in a for a in inserts), inserts
        assert not any("@example.org" in a for a in inserts), inserts
    finally:
        v.close()


def test_the_audit_counts_the_write_flaws_planted_and_none_in_the_layer(db: Path) -> None:
    from clarisql.envs.synth.audit import audit_tasks
    from clarisql.envs.tasks import Label, Task, Underspec

    lake = discover(profile_lake(db))
    which = Underspec(Label("Missing", "", "table"), "sales_2022")

    def w(i: int, acts: list[str], uss: list[Underspec] | None = None) -> Task:
        return Task(id=f"w{i}", db="x", utterance="Please do it.", writable=True,
                    category="write", gold_actions=acts, underspecs=uss or [])  # fmt: skip

    planted = [
        w(1, ["UPDATE \"people\" SET \"height\" = 170 WHERE \"birth_city\" = 'Big River'"]),
        w(2, ['UPDATE "people" SET "height" = 170 WHERE "person_id" = 3']),
        w(3, ["INSERT INTO \"sales_2022\" (\"sale_day\", \"store\", \"units\") "
              "VALUES ('2022-05-05', 'Avon', 7)"], [which]),
        w(4, ["INSERT INTO \"sales_2022\" (\"store\", \"units\") VALUES ('Avon', 7)"], [which]),
    ]  # fmt: skip
    v = Verifier(db)
    try:
        got = audit_tasks(planted, lake, v)
        assert got.total("write-row-not-identified") == 1, got.examples
        assert got.total("which-table-given-away") == 1, got.examples
        made = []
        for seed in range(4):
            made += write_tasks(lake, [], v, random.Random(seed), 30)
        report = audit_tasks(made, lake, v)
    finally:
        v.close()
    for flaw in ("write-row-not-identified", "which-table-given-away"):
        assert report.total(flaw) == 0, report.examples[flaw]
