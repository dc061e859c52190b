"""Regressions from an acceptance audit of ``clarisql synth`` on databases it had never seen.

Each database is written here (real SQLite, real CSV files): surrogate keys of same-schema yearly
tables, a key named by one word of its table's name, repeated CSV headers, a corrupt database
whose integrity report runs to many lines, and underspecified tasks that an agent which never
asks must not solve (scored by the environment with the ``explore-without-clarifying`` probe).
"""

from __future__ import annotations

import csv
import json
import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.cli import main
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.synth import llm
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.ingest import ingest
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.policies import make_policy
from clarisql.policies.probes import literal_projection
from clarisql.rollouts.episode import run_episode

from ._fake_openai import FakeOpenAI, completion
from .conftest import SHARED_DATA, need_shared

PRODUCTS = ["Widget", "Gadget", "Gizmo", "Doohickey", "Thingamajig", "Sprocket", "Whatsit"]
THINGS = "Lamp Chair Table Shelf Stool Bench Desk Sofa Mirror Clock Rug Vase".split()
CITIES = ["Zürich", "São Paulo", "Kraków", "New York", "Montréal", "Oslo", "Cape Town"]


def write_yearly_db(path: Path) -> Path:
    """Three same-schema yearly tables with their own ``id`` 1..n, and a quoted-name table."""
    rng = random.Random(5)
    con = sqlite3.connect(path)
    for y in (2021, 2022, 2023):
        con.execute(
            f'CREATE TABLE "sales_{y}" (id INTEGER PRIMARY KEY, product TEXT, qty INTEGER, '
            "price REAL, sold_on TEXT)"
        )
        con.executemany(
            f'INSERT INTO "sales_{y}" (product, qty, price, sold_on) VALUES (?, ?, ?, ?)',
            [
                (
                    rng.choice(PRODUCTS),
                    rng.randint(1, 20),
                    round(rng.uniform(1, 99), 2),
                    f"{y}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                )
                for _ in range(120)
            ],
        )
    con.execute('CREATE TABLE "Station Readings" ("station name" TEXT, "temp °C" TEXT, day TEXT)')
    con.executemany(
        'INSERT INTO "Station Readings" VALUES (?, ?, ?)',
        [
            (
                f"St-{rng.randint(1, 30):03d}",
                rng.choice(["NA", "", f"{rng.uniform(-10, 35):.1f}"]),
                f"20{rng.randint(15, 23)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
            for _ in range(300)
        ],
    )
    con.commit()
    con.close()
    return path


def write_messy_csvs(folder: Path) -> Path:
    """A BOM, a semicolon delimiter, repeated and blank headers; orders keyed by customer_id."""
    rng = random.Random(3)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "Customers List.csv", "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh, delimiter=";")
        w.writerow(["id", "Name", "name", "city", "", "balance"])
        for i in range(1, 121):
            bal = rng.choice(["NA", "", f"{rng.uniform(0, 5000):.2f}"])
            w.writerow([i, f"Cust {i}", f"alias{i}", rng.choice(CITIES), "", bal])
    with open(folder / "orders.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["order_id", "customer_id", "amount", "status", "Amount"])
        for i in range(1, 301):
            amount = rng.choice(["NA", f"{rng.uniform(1, 900):.2f}"])
            status = rng.choice(["open", "shipped", "returned", "cancelled"])
            w.writerow([i, rng.randint(1, 120), amount, status, rng.randint(1, 5)])
    return folder


def test_repeated_csv_headers_keep_their_names(tmp_path: Path) -> None:
    db = ingest([write_messy_csvs(tmp_path / "csv")], tmp_path / "out")
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute('PRAGMA table_info("customers_list")')]
    assert cols == ["id", "Name", "name_2", "city", "column_5", "balance"]
    cols = [r[1] for r in con.execute('PRAGMA table_info("orders")')]
    assert cols == ["order_id", "customer_id", "amount", "status", "Amount_2"]


def test_bare_keys_do_not_join_and_a_word_of_the_table_name_does(tmp_path: Path) -> None:
    db = ingest(
        [write_yearly_db(tmp_path / "y.sqlite"), write_messy_csvs(tmp_path / "csv")],
        tmp_path / "out",
    )
    lake = discover(profile_lake(db))
    pairs = {(j.left, j.right) for j in lake.joins}
    # sales_2021.id and sales_2022.id are each table's own key: values 1..n overlap by chance
    assert not [p for p in pairs if p[0][1] == "id" and p[1][1] == "id"], pairs
    # orders.customer_id refers to customers_list.id ("customer" is a word of the table's name)
    assert (("orders", "customer_id"), ("customers_list", "id")) in pairs
    assert {frozenset((u.left, u.right)) for u in lake.unions} >= {
        frozenset(("sales_2021", "sales_2022")),
        frozenset(("sales_2022", "sales_2023")),
    }


def test_corrupt_pages_give_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "good.sqlite"
    con = sqlite3.connect(src)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT)")
    con.executemany("INSERT INTO t (note) VALUES (?)", [(f"note {i} " * 8,) for i in range(3000)])
    con.commit()
    con.close()
    data = bytearray(src.read_bytes())
    for off in range(3 * 4096, len(data) - 4096, 4096 * 3):  # scribble over many b-tree pages
        data[off : off + 300] = b"\xff" * 300
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(bytes(data))
    assert main(["synth", str(bad), "--out", str(tmp_path / "out"), "--tasks", "10"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("clarisql synth: error:") and "corrupt" in err


def test_literal_projection() -> None:
    got = literal_projection('SELECT MAX("q") FROM "t" WHERE a = 1', 'SELECT COUNT(*) FROM "t"')
    assert got == 'SELECT COUNT(*) FROM "t" WHERE a = 1'
    grouped = "SELECT a, COUNT(*) FROM t GROUP BY a"
    assert literal_projection(grouped, "SELECT b FROM t") == grouped


@pytest.mark.parametrize("source", ["yearly", "messy"])
def test_never_asking_solves_no_underspecified_task(source: str, tmp_path: Path) -> None:
    src = (
        write_yearly_db(tmp_path / "y.sqlite")
        if source == "yearly"
        else write_messy_csvs(tmp_path / "csv")
    )
    res = synthesize(
        SynthConfig([src], tmp_path / "out", tasks=120, seed=0, mixture={"clarify": 1.0})
    )
    under = [t for t in res.tasks if t.underspecs and not t.writable]
    assert len(under) >= 30, res.made
    env = ClarifySQLEnv(suite=str(res.tasks_path))
    probe, oracle = make_policy("explore-without-clarifying"), make_policy("oracle")
    solved = [t.id for t in under if run_episode(env, probe, t.id).correct]
    assert solved == [], [(t.utterance, t.gold_sql) for t in under if t.id in solved]
    assert all(run_episode(env, oracle, t.id).correct for t in under[:20])


def test_a_table_without_measures_still_gets_scope_and_name_tasks(tmp_path: Path) -> None:
    """Only text columns (prices written as "$1,234.50"): COUNT(*) carries the FROM and WHERE
    parts; only the SELECT (intent) recipe needs a numeric measure."""
    rng = random.Random(9)
    folder = tmp_path / "csv"
    folder.mkdir()
    with open(folder / "prices.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "price", "region"])
        for _ in range(250):
            price = f"${rng.uniform(1, 3000):,.2f}"
            # (names with words: "Item" for "Item 12" leaves out only a number, no name task)
            name = f"{rng.choice(CITIES)} {rng.choice(THINGS)}"
            w.writerow([name, price, rng.choice(CITIES[:5])])
    res = synthesize(SynthConfig([folder], tmp_path / "out", tasks=60, mixture={"clarify": 1.0}))
    cats = {t.category for t in res.tasks if t.underspecs}
    assert {"from", "where", "mixed"} <= cats, res.made
    assert "select" not in cats and "select" in res.shortfalls


def test_no_answer_is_written_in_its_question(tmp_path: Path) -> None:
    """A 1:1 copy of a table (film / film_text): "the title of the film text whose film's title
    is 'X'" answers 'X'. The copy is a mirror table (``discover.subjectless_tables``): no task is
    about it, and the string-literal probe must still solve nothing."""
    rng = random.Random(4)
    db = tmp_path / "films.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE film (film_id INTEGER PRIMARY KEY, title TEXT, rating TEXT, len INT)")
    con.execute("CREATE TABLE film_text (film_id INTEGER PRIMARY KEY, title TEXT)")
    words = ["ALASKA", "PHANTOM", "ACADEMY", "DINOSAUR", "ADAPTATION", "HOLES", "BLADE", "RUNNER"]
    for i in range(1, 201):
        title = f"{rng.choice(words)} {rng.choice(words)} {i}"
        con.execute(
            "INSERT INTO film VALUES (?, ?, ?, ?)",
            (i, title, rng.choice(["G", "PG", "R", "NC-17"]), rng.randint(46, 185)),
        )
        con.execute("INSERT INTO film_text VALUES (?, ?)", (i, title))
    con.commit()
    con.close()
    res = synthesize(SynthConfig([db], tmp_path / "out", tasks=150, seed=0))
    assert not any("film text" in t.utterance.lower() for t in res.tasks)
    env = ClarifySQLEnv(suite=str(res.tasks_path))
    probe = make_policy("string-literal-sql")
    answerable = [t for t in res.tasks if t.answerable and not t.writable]
    assert [t.id for t in answerable if run_episode(env, probe, t.id).correct] == []


def test_a_measure_is_never_the_scope_to_pick(tmp_path: Path) -> None:
    """qty (1..20) is aggregated; "for the one qty I mean" or MAX(qty) WHERE qty = 7 is no task."""
    res = synthesize(
        SynthConfig([write_yearly_db(tmp_path / "y.sqlite")], tmp_path / "out", tasks=120)
    )
    for t in res.tasks:
        for u in t.underspecs:
            assert u.label.slot != "qty", (t.utterance, t.gold_sql)
        assert "one particular qty" not in t.utterance and "one qty" not in t.utterance


def test_a_declared_foreign_key_joins_whatever_its_names(tmp_path: Path) -> None:
    """SQL keywords and dots in names; "line.items"."order ref" REFERENCES "order"("select")."""
    rng = random.Random(2)
    db = tmp_path / "kw.sqlite"
    con = sqlite3.connect(db)
    con.execute('CREATE TABLE "order" ("select" INTEGER PRIMARY KEY, "from" TEXT, "where" REAL)')
    con.execute(
        'CREATE TABLE "line.items" (id INTEGER PRIMARY KEY, '
        '"order ref" INTEGER REFERENCES "order", sku TEXT, qty INTEGER)'
    )
    for i in range(1, 201):
        con.execute(
            'INSERT INTO "order" VALUES (?, ?, ?)',
            (i, rng.choice(["alpha", "beta", "gamma", "delta"]), round(rng.uniform(-9, 9), 2)),
        )
    for _ in range(600):
        con.execute(
            'INSERT INTO "line.items" ("order ref", sku, qty) VALUES (?, ?, ?)',
            (rng.randint(1, 200), rng.choice(["AB-1", "CD-9", "EF-3", "XY-7"]), rng.randint(1, 9)),
        )
    con.commit()
    con.close()
    lake = discover(profile_lake(ingest([db], tmp_path / "out")))
    assert (("line.items", "order ref"), ("order", "select")) in {
        (j.left, j.right) for j in lake.joins
    }


def test_an_unclosed_quote_is_an_error_and_quoted_line_breaks_are_not(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    rows = "".join(f"{i},v{i},{i * 3}\n" for i in range(60))
    ok = tmp_path / "ok"
    ok.mkdir()
    (ok / "t.csv").write_text('a,b,c\n-1,"two\nlines",1\n' + rows + '99,"last\nvalue"\n')
    db = ingest([ok], tmp_path / "out_ok")
    got = sqlite3.connect(db).execute("SELECT b FROM t WHERE a IN (-1, 99) ORDER BY a").fetchall()
    assert got == [("two\nlines",), ("last\nvalue",)]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "t.csv").write_text("a,b,c\n" + rows + '61,"never closed,1\n62,x,2\n63,y,3\n')
    assert main(["synth", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "line 62 is never closed" in err, err


def test_an_output_folder_under_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = write_messy_csvs(tmp_path / "csv")
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert main(["synth", str(src), "--out", str(blocker / "out"), "--tasks", "5"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"clarisql synth: error: {blocker / 'out'}: "), err


def test_virtual_tables_and_their_shadow_tables_are_no_data(tmp_path: Path) -> None:
    """An FTS5 index and an R*Tree: their shadow tables (notes_fts_data, boxes_node...) are
    SQLite's internals, neither profiled nor copied from a second source."""
    rng = random.Random(6)
    db = tmp_path / "fts.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, author TEXT, words INTEGER)")
    con.executemany(
        "INSERT INTO notes (author, words) VALUES (?, ?)",
        [(rng.choice(CITIES), rng.randint(50, 900)) for _ in range(200)],
    )
    con.execute("CREATE VIRTUAL TABLE notes_fts USING fts5(author, content='notes')")
    con.execute("INSERT INTO notes_fts(notes_fts) VALUES ('rebuild')")
    con.execute("CREATE VIRTUAL TABLE boxes USING rtree(id, minx, maxx)")
    con.executemany("INSERT INTO boxes VALUES (?, ?, ?)", [(i, i, i + 1) for i in range(60)])
    con.commit()
    con.close()
    names = {t.name for t in profile_lake(ingest([db], tmp_path / "one")).tables}
    assert names == {"notes"}
    other = write_yearly_db(tmp_path / "y.sqlite")
    lake = ingest([other, db], tmp_path / "two")  # db is the second source: tables copied
    copied = {r[0] for r in sqlite3.connect(lake).execute("SELECT name FROM sqlite_master")}
    assert "notes" in copied and not {n for n in copied if n.startswith(("notes_", "boxes"))}


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://h:99999", "http://h:abc", "http://:80"], ids=str
)
def test_an_llm_url_the_client_would_reject_is_one_line(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = write_messy_csvs(tmp_path / "csv")
    args = ["synth", str(src), "--out", str(tmp_path / "out"), "--llm", f"openai:m@{url}"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("clarisql synth: error: --llm "), err


def test_names_in_other_scripts_stay_distinct(tmp_path: Path) -> None:
    """Chinese names: 产品(名称, 产地) and 学生(姓名, 城市) share no column, so they are no union
    (a normaliser keeping only ASCII made every name "" and mapped both columns onto one);
    订单.学生编号 -> 学生表.学生编号 joins by name; same-schema tables do union."""
    rng = random.Random(0)
    db = tmp_path / "zh.sqlite"
    con = sqlite3.connect(db)
    con.execute('CREATE TABLE "学生" ("姓名" TEXT, "城市" TEXT)')
    con.execute('CREATE TABLE "产品" ("名称" TEXT, "产地" TEXT)')
    con.execute('CREATE TABLE "订单" ("编号" INTEGER PRIMARY KEY, "学生编号" INTEGER, "金额" REAL)')
    con.execute('CREATE TABLE "学生表" ("学生编号" INTEGER PRIMARY KEY, "姓名" TEXT)')
    for y in (2021, 2022):
        con.execute(f'CREATE TABLE "销售{y}" ("地区" TEXT, "金额" REAL)')
        con.executemany(
            f'INSERT INTO "销售{y}" VALUES (?, ?)',
            [(rng.choice(["北京", "上海", "济南"]), rng.uniform(1, 99)) for _ in range(80)],
        )
    for i in range(100):
        city = rng.choice(["北京", "上海", "济南"])
        con.execute('INSERT INTO "学生" VALUES (?, ?)', (f"学生{i}", city))
        con.execute('INSERT INTO "产品" VALUES (?, ?)', (f"产品{i}", city))
        con.execute('INSERT INTO "学生表" VALUES (?, ?)', (i + 1, f"学生{i}"))
    con.executemany(
        'INSERT INTO "订单" ("学生编号", "金额") VALUES (?, ?)',
        [(rng.randint(1, 100), rng.uniform(1, 99)) for _ in range(300)],
    )
    con.commit()
    con.close()
    lake = discover(profile_lake(ingest([db], tmp_path / "out")))
    assert {frozenset((u.left, u.right)) for u in lake.unions} == {
        frozenset(("销售2021", "销售2022"))
    }
    assert (("订单", "学生编号"), ("学生表", "学生编号")) in {(j.left, j.right) for j in lake.joins}


def test_the_llm_scores_a_bounded_number_of_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lake of many same-schema tables has thousands of union pairs: the LLM scores the best
    MAX_SCORED_PAIRS of each kind, the others keep their offline score."""
    db = ingest(
        [write_yearly_db(tmp_path / "y.sqlite"), write_messy_csvs(tmp_path / "csv")], tmp_path / "o"
    )
    lake = discover(profile_lake(db))
    assert len(lake.unions) >= 3 and len(lake.joins) >= 1
    rated: list[str] = []

    def model(body: dict, n: int) -> tuple[int, bytes, float]:
        rated.append(body["messages"][1]["content"])
        return 200, json.dumps(completion("2")).encode(), 0.0  # every scored pair is dropped

    monkeypatch.setattr(llm, "MAX_SCORED_PAIRS", 1)
    with FakeOpenAI(model) as srv:
        client = llm.LLMClient("fake", srv.url, cache_dir=tmp_path / "cache", max_retries=0)
        got = client.rescore(lake, 6.0)
    assert len(rated) == 2
    assert got.joins == lake.joins[1:] and got.unions == lake.unions[1:]


def test_pagila_probes_solve_nothing_they_should_not(tmp_path: Path) -> None:
    """DySQL-Bench's Pagila (film / film_text is a 1:1 copy): SELECT-a-literal solves no read,
    never asking solves no underspecified read."""
    db = need_shared(SHARED_DATA / "dysql/DySQL-Bench/dysql_bench/envs/pagila/data/Pagila.sqlite")
    res = synthesize(SynthConfig([db], tmp_path / "out", tasks=300, seed=0))
    env = ClarifySQLEnv(suite=str(res.tasks_path))
    literal, explore = make_policy("string-literal-sql"), make_policy("explore-without-clarifying")
    reads = [t for t in res.tasks if t.answerable and not t.writable]
    assert [t.id for t in reads if run_episode(env, literal, t.id).correct] == []
    under = [t for t in reads if t.underspecs]
    assert len(under) >= 20
    assert [t.id for t in under if run_episode(env, explore, t.id).correct] == []
