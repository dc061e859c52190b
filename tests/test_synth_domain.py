"""The domain plug-in seam (clarisql.envs.synth.domain): a toy domain on real SQLite."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from clarisql.envs.synth.domain import (
    CARD_FILE,
    DomainDraft,
    DomainError,
    DomainRun,
    Quota,
    build_domain_folder,
    check_draft,
    fill_quota,
    generate_domain,
    misspell,
)
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Underspec, load_tasks

SHOPS = ("north", "south", "east")


def _db(path: Path, rng: random.Random) -> list[str]:
    conn = sqlite3.connect(path)
    with conn:
        for shop in SHOPS:
            conn.execute(
                f"CREATE TABLE sales_{shop} (id INTEGER PRIMARY KEY, item TEXT, price REAL)"
            )
            conn.executemany(
                f"INSERT INTO sales_{shop} (item, price) VALUES (?, ?)",
                [(rng.choice(("tea", "cake", "bread")), rng.randint(1, 90)) for _ in range(30)],
            )
    conn.close()
    return list(SHOPS)


class Toy:
    """Three same-schema shop tables; reads, a Missing shop, an unanswerable column, a write."""

    name = "toy"
    db_key = "toy"

    def build_database(self, path: Path, rng: random.Random) -> Any:
        return _db(path, rng)

    def tidy(self, text: str) -> str:
        return text[0].upper() + text[1:]

    def plan(self, run: DomainRun) -> list[Quota]:
        rng = run.rng

        def read() -> DomainDraft:
            shop, item = rng.choice(run.world), rng.choice(("tea", "cake", "bread"))
            sql = f"SELECT COUNT(*) FROM sales_{shop} WHERE item = '{item}'"
            return DomainDraft(
                "count",
                "well-specified",
                f"how many {item} sold in {shop}?",
                [f"sales_{shop}"],
                sql,
                sql,
            )

        def missing() -> DomainDraft:
            shop = rng.choice(run.world[1:])
            sql = "SELECT SUM(price) FROM sales_{}"
            us = [Underspec(Label("Missing", "", "shop"), shop)]
            return DomainDraft(
                "sum+Missing_shop",
                "from",
                f"what is the revenue of my shop (#{rng.randint(1, 999)})?",
                [f"sales_{shop}"],
                sql.format(shop),
                sql.format(run.world[0]),
                underspecs=us,
            )

        def unans() -> DomainDraft:
            shop = rng.choice(run.world)
            return DomainDraft(
                "cashier",
                "unanswerable:column-related",
                f"who was the cashier of sale {rng.randint(1, 30)} in {shop}?",
                [],
                naive_sql=f"SELECT item FROM sales_{shop} LIMIT 1",
                unanswerable_kind="column-related",
                attribute="cashier",
            )

        def write() -> DomainDraft:
            shop, sid = rng.choice(run.world), rng.randint(1, 30)
            act = f"UPDATE sales_{shop} SET price = price + 1 WHERE id = {sid}"
            return DomainDraft(
                "raise",
                "write",
                f"add 1 to the price of sale {sid} in {shop}.",
                [f"sales_{shop}"],
                gold_actions=[act],
            )

        return [
            Quota("well-specified", 4, [read]),
            Quota("from", 3, [missing]),
            Quota("unanswerable", 2, [unans]),
            Quota("write", 2, [write]),
        ]


@pytest.fixture()
def run(tmp_path: Path) -> DomainRun:
    rng = random.Random(5)
    path = tmp_path / "toy.sqlite"
    return DomainRun(rng, _db(path, rng), Verifier(path, max_rows=10_000))


def _tidy(text: str) -> str:
    return text


def test_generate_is_deterministic_and_complete(tmp_path: Path) -> None:
    a = generate_domain(Toy(), tmp_path / "a.sqlite", seed=3)
    b = generate_domain(Toy(), tmp_path / "b.sqlite", seed=3)
    assert [t.to_dict() for t in a] == [t.to_dict() for t in b]
    assert [t.id for t in a] == [f"toy/{i:04d}" for i in range(1, 12)]
    assert sorted(t.category for t in a).count("write") == 2
    assert len({t.utterance.casefold() for t in a}) == len(a)
    assert all(t.db == "toy" and "template" in t.metadata for t in a)
    assert all(("naive_actions" in t.metadata) == t.writable for t in a)


def test_build_folder_publishes_three_files(tmp_path: Path) -> None:
    db, tasks = build_domain_folder(Toy(), tmp_path / "f", 1, "toy.sqlite", version=7)
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == sorted(
        ["toy.sqlite", "tasks.jsonl", CARD_FILE]
    )
    card = (tmp_path / "f" / CARD_FILE).read_text()
    assert "generator version 7, seed 1" in card and "| write | 2 |" in card
    assert len(load_tasks(tasks)) == 11 and db.stat().st_size > 0


def test_literal_reading_must_differ(run: DomainRun) -> None:
    sql = "SELECT SUM(price) FROM sales_north"
    us = [Underspec(Label("Missing", "", "shop"), "north")]
    same = DomainDraft("t", "from", "revenue?", [], sql, sql, underspecs=us)
    assert not check_draft(run, same, _tidy)
    other = DomainDraft(
        "t", "from", "revenue?", [], sql, sql.replace("north", "south"), underspecs=us
    )
    assert check_draft(run, other, _tidy)
    again = DomainDraft(
        "t", "from", "Revenue? ", [], sql, sql.replace("north", "east"), underspecs=us
    )
    assert not check_draft(run, again, _tidy)  # the utterance is taken (case, spaces ignored)


def test_trivial_gold_and_failed_check_are_rejected(run: DomainRun) -> None:
    none = "SELECT COUNT(*) FROM sales_north WHERE item = 'caviar'"
    assert not check_draft(run, DomainDraft("t", "well-specified", "q1", [], none, none), _tidy)
    ok = "SELECT COUNT(*) FROM sales_north"
    d = DomainDraft("t", "well-specified", "q2", [], ok, ok, check="SELECT 0")
    assert not check_draft(run, d, _tidy)


def test_gold_written_in_the_question_is_rejected(run: DomainRun) -> None:
    """SELECT 'X' must not pass: an answer readable off the utterance is no task."""
    sql = "SELECT item FROM sales_north WHERE id = 1"
    (item,) = run.rows(sql)[0]
    echo = DomainDraft("t", "well-specified", f"Which item is {item}?", [], sql, sql)
    assert not check_draft(run, echo, _tidy)
    fine = DomainDraft("t", "well-specified", "Which item was sold first in north?", [], sql, sql)
    assert check_draft(run, fine, _tidy)


def test_unanswerable_attribute_checked_on_schema(run: DomainRun) -> None:
    naive = "SELECT item FROM sales_north LIMIT 1"

    def un(kind: str, attr: str | None, text: str) -> DomainDraft:
        return DomainDraft(
            "t",
            f"unanswerable:{kind}",
            text,
            [],
            naive_sql=naive,
            unanswerable_kind=kind,
            attribute=attr,
        )

    assert not check_draft(run, un("column-related", "Price", "a"), _tidy)  # it exists
    assert not check_draft(run, un("column-related", None, "b"), _tidy)  # names none
    assert check_draft(run, un("column-related", "cashier", "c"), _tidy)
    assert not check_draft(run, un("column-unrelated", "item colour", "d"), _tidy)
    assert check_draft(run, un("column-unrelated", "blood type", "e"), _tidy)
    assert not check_draft(run, un("out-of-domain", "sales poem", "f"), _tidy)
    assert check_draft(run, un("out-of-domain", "haiku", "g"), _tidy)
    empty = un("non-sql", None, "h")
    empty.naive_sql = "SELECT item FROM sales_north WHERE 0"
    assert not check_draft(run, empty, _tidy)  # the literal reading must answer something


def test_write_checks(run: DomainRun) -> None:
    def w(gold: list[str], naive: list[str] | None = None, text: str = "w") -> DomainDraft:
        us = [Underspec(Label("Missing", "", "shop"), "north")] if naive is not None else []
        return DomainDraft(
            "t", "write", text, [], gold_actions=gold, naive_actions=naive or [], underspecs=us
        )

    assert not check_draft(run, w(["UPDATE sales_north SET price = price WHERE id = 0"]), _tidy)
    assert not check_draft(run, w(["UPDATE sales_north SET price = price"], text="w2"), _tidy)
    assert not check_draft(
        run, w(["SELECT id FROM sales_north WHERE 0", "DELETE FROM sales_north"], text="w3"), _tidy
    )
    assert check_draft(run, w(["DELETE FROM sales_north WHERE id = 1"], text="w4"), _tidy)
    gold = ["DELETE FROM sales_north WHERE id = 2"]
    assert not check_draft(run, w(gold, gold, text="w5"), _tidy)
    assert check_draft(run, w(gold, ["DELETE FROM sales_south WHERE id = 2"], text="w6"), _tidy)
    with pytest.raises(DomainError):
        check_draft(run, w(["DELETE FROM no_such_table"], text="w7"), _tidy)


def test_label_bugs_and_unmet_quotas_fail_loudly(run: DomainRun) -> None:
    sql = "SELECT COUNT(*) FROM sales_north"
    bad = DomainDraft(
        "t",
        "where",
        "how many teas?",
        [],
        sql,
        sql,
        underspecs=[Underspec(Label("not-exist", "coffee", "item"), "tea")],
    )
    with pytest.raises(DomainError):
        check_draft(run, bad, _tidy)
    never = Quota("well-specified", 2, [lambda: None])
    with pytest.raises(DomainError, match="cannot make 2 well-specified"):
        fill_quota(run, never, _tidy)


def test_misspell_avoids_real_names() -> None:
    rng = random.Random(0)
    for _ in range(50):
        out = misspell(rng, "Riverton Metro", ["Riverton Metor"])
        assert out is not None and out.casefold() not in ("riverton metro", "riverton metor")
        assert sum(a != b for a, b in zip(out, "Riverton Metro")) >= 1
    assert misspell(rng, "a b c", []) is None
