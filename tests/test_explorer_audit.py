"""benchmarks/explorer_audit.py: rank explorers against chance. It must catch a planted bias
(a probe that reports nothing may be blind), stay quiet on uniform golds, and the built-in
suite's golds must not lean on any rank (the second-latest year was right 26 of 44 times)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.tasks import Label, Task, Underspec

from ._benchmarks import bench


def _probe():
    return bench("explorer_audit")


YEARS = (2019, 2020, 2021, 2022)
NAMES = ("Acme Group", "Acme Homes", "Acme Tools", "Zenith Ltd")


def _db(path: Path) -> Path:
    con = sqlite3.connect(path)
    for i, y in enumerate(YEARS):
        con.execute(f"CREATE TABLE fin_{y} (company TEXT, profit REAL)")
        con.executemany(f"INSERT INTO fin_{y} VALUES (?, ?)", [(n, i) for n in NAMES])
    con.execute("CREATE TABLE sales (buyer TEXT, price REAL)")
    rows = [(n, k + 1.0) for k, n in enumerate(NAMES) for _ in range(k + 1)]  # Zenith most often
    rows += [("Acme Tools", 9.0)] * 5  # then Acme Tools: the most frequent of the readings
    con.executemany("INSERT INTO sales VALUES (?, ?)", rows)
    con.commit()
    con.close()
    return path


def _year_task(i: int, gold: int) -> Task:
    return Task(
        id=f"y{i}",
        db="x",
        utterance="For the year I'm working on, what was the total profit?",
        category="from",
        gold_sql=f"SELECT SUM(profit) FROM fin_{gold}",
        underspecs=[Underspec(Label("Missing", "", "year"), str(gold))],
        metadata={"tables": [f"fin_{gold}"], "naive_sql": "SELECT SUM(profit) FROM fin_2022"},
    )


def _name_task(i: int, gold: str) -> Task:
    return Task(
        id=f"n{i}",
        db="x",
        utterance="What did Acme pay in total?",
        category="where",
        gold_sql=f"SELECT SUM(price) FROM sales WHERE buyer = '{gold}'",
        underspecs=[Underspec(Label("not-exist", "Acme", "buyer"), gold)],
        metadata={
            "tables": ["sales"],
            "naive_sql": "SELECT SUM(price) FROM sales WHERE buyer = 'Acme'",
        },
    )


def test_probe_catches_a_planted_rank_bias(tmp_path: Path) -> None:
    probe = _probe()
    db = _db(tmp_path / "d.sqlite")
    # the gold is always the second-latest year (the latest is the literal reading): the bias
    # the built-in suite had; and the name is always the most frequent completion
    tasks = [_year_task(i, 2021) for i in range(30)] + [
        _name_task(i, "Acme Tools") for i in range(30)
    ]
    res = probe.audit(tasks, db)
    flagged = " ".join(res["above chance"])
    assert "Missing:year value-desc-1" in flagged
    assert "not-exist:buyer frequent-1" in flagged
    year = res["rank explorers"]["Missing:year"]
    assert year["chance rate"] == pytest.approx(1 / 3, abs=1e-3)  # 2022 is the literal: left out
    assert year["explorers"]["value-desc-1"]["hits"] == 30


def test_probe_is_quiet_on_uniform_golds(tmp_path: Path) -> None:
    probe = _probe()
    db = _db(tmp_path / "d.sqlite")
    tasks = [_year_task(i, YEARS[i % 3]) for i in range(30)]
    tasks += [_name_task(i, NAMES[i % 3]) for i in range(30)]
    res = probe.audit(tasks, db)
    assert res["above chance"] == []
    assert res["rank explorers"]["not-exist"]["chance rate"] == pytest.approx(1 / 3, abs=1e-3)


@pytest.fixture(scope="module")
def builtin_reports(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    from clarisql.envs.suites.builtin import builtin_suite

    probe = _probe()
    out = []
    for seed in (0, 1, 2):
        s = builtin_suite(seed, tmp_path_factory.mktemp(f"b{seed}"))
        db = s.databases["builtin"].path
        con = sqlite3.connect(db)
        tables = con.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'enterprise_finance_%'"
        ).fetchall()
        con.close()
        out.append(
            {
                "audit": probe.audit(s.tasks, db),
                "first year": min(int(n.rsplit("_", 1)[1]) for (n,) in tables),
                "years": [
                    int(u.value)
                    for t in s.tasks
                    for u in t.underspecs
                    if u.label.kind == "Missing" and u.label.slot == "year"
                ],
            }
        )
    return out


def test_builtin_second_latest_year_is_a_guess(builtin_reports: list[dict]) -> None:
    hits = parts = chance = var = 0.0
    for r in builtin_reports:
        g = r["audit"]["rank explorers"]["Missing:year"]
        hits += g["explorers"]["value-desc-1"]["hits"]
        parts += g["parts"]
        chance += g["chance"]
        p = g["chance rate"]
        var += g["parts"] * p * (1 - p)
    # the earlier rule: 26 of 44 against a chance of 14.7 (z = 3.6)
    assert hits <= chance + 3 * var**0.5, (hits, parts, chance)


def test_builtin_missing_year_gold_can_be_the_first_year(builtin_reports: list[dict]) -> None:
    # the earlier rule never kept the first year (the first-row explorer's pick) as a gold
    firsts = sum(y == r["first year"] for r in builtin_reports for y in r["years"])
    assert firsts > 0


def test_builtin_no_rank_explorer_above_chance(builtin_reports: list[dict]) -> None:
    for r in builtin_reports:
        assert r["audit"]["above chance"] == []
        assert r["audit"]["per kind"]["Missing"].get("gold outside readings", 0) == 0


#: rows per region: four regions share an answer (2 rows), "Lit" is the literal reading
REGIONS = {"R1": 2, "R2": 2, "R3": 2, "R4": 2, "R5": 3, "R6": 4, "Lit": 9}


def _region_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE trips (region TEXT, fare REAL)")
    rows = [(r, float(i)) for r, n in REGIONS.items() for i in range(n)]
    con.executemany("INSERT INTO trips VALUES (?, ?)", rows)
    con.commit()
    con.close()
    return path


def _region_task(i: int, gold: str) -> Task:
    return Task(
        id=f"r{i}",
        db="x",
        utterance="For the region I'm working on, how many trips are there?",
        category="from",
        gold_sql=f"SELECT COUNT(*) FROM trips WHERE region = '{gold}'",
        underspecs=[Underspec(Label("Missing", "", "region"), gold)],
        metadata={
            "tables": ["trips"],
            "naive_sql": "SELECT COUNT(*) FROM trips WHERE region = 'Lit'",
        },
    )


def test_probe_catches_golds_uniform_over_readings_not_answers(tmp_path: Path) -> None:
    # the gold uniform over the six readings: four of them count 2, so an agent that runs each
    # reading and answers the commonest count is right 2/3 of the time against a guess's 1/3
    probe = _probe()
    db = _region_db(tmp_path / "r.sqlite")
    regions = ["R1", "R2", "R3", "R4", "R5", "R6"]
    res = probe.audit([_region_task(i, regions[i % 6]) for i in range(36)], db)
    part = res["rank explorers"]["Missing"]
    assert part["chance rate"] == pytest.approx(1 / 3, abs=1e-3)  # three distinct answers
    assert part["explorers"]["answer-mode"]["hits"] == 24
    assert any("answer-mode" in f for f in res["above chance"])


def test_probe_is_quiet_on_golds_uniform_over_answers(tmp_path: Path) -> None:
    probe = _probe()
    db = _region_db(tmp_path / "r.sqlite")
    # each answer (2, 3, 4) equally often, the readings within an answer in turn
    golds = ["R1", "R5", "R6", "R2", "R5", "R6", "R3", "R5", "R6", "R4", "R5", "R6"] * 3
    res = probe.audit([_region_task(i, g) for i, g in enumerate(golds)], db)
    part = res["rank explorers"]["Missing"]
    assert part["explorers"]["answer-mode"]["hits"] == 12
    assert res["above chance"] == []
