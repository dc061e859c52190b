"""TrustSQL's mixture holds in the suite made, not only in the suite asked for.

A lake mostly named in another language gives few answerable tasks (its tables are no subject);
its one English table still allows non-sql requests without end. The suite must then stay half
unanswerable (never four of five), and no unanswerable kind may fill the others' shares beyond
twice its own (never a suite of non-sql requests).
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from clarisql.envs.synth.pipeline import SynthConfig, _keep_unanswerable_share, synthesize
from clarisql.envs.tasks import Task


def _write_lake(path: Path) -> Path:
    """One English table (jobs) and three named in German."""
    rng = random.Random(0)
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE jobs (job_id TEXT PRIMARY KEY, job_title TEXT, "
                  "min_salary INTEGER, max_salary INTEGER)")  # fmt: skip
        c.execute("CREATE TABLE mitarbeiter (mitarbeiter_id INTEGER PRIMARY KEY, vorname TEXT, "
                  "nachname TEXT, gehalt REAL, abteilung TEXT)")  # fmt: skip
        c.execute("CREATE TABLE abteilungen (abteilung_id INTEGER PRIMARY KEY, "
                  "abteilungsname TEXT, standort TEXT)")  # fmt: skip
        c.execute("CREATE TABLE standorte (standort_id INTEGER PRIMARY KEY, stadt TEXT, "
                  "bundesland TEXT, postleitzahl TEXT)")  # fmt: skip
        titles = ["Accountant", "Stock Manager", "Programmer", "Sales Representative",
                  "Shipping Clerk", "Purchasing Manager", "Marketing Manager", "President",
                  "Administration Assistant", "Public Accountant"]  # fmt: skip
        for i, title in enumerate(titles):
            lo = rng.randint(2, 20) * 1000
            c.execute("INSERT INTO jobs VALUES (?, ?, ?, ?)",
                      (f"J{i:02d}", title, lo, lo + rng.randint(2, 20) * 1000))  # fmt: skip
        vor = ["Anna", "Bernd", "Clara", "Dieter", "Elke", "Frank", "Greta", "Heinz"]
        abt = ["Einkauf", "Vertrieb", "Lager", "Buchhaltung"]
        for i in range(1, 81):
            c.execute("INSERT INTO mitarbeiter VALUES (?, ?, ?, ?, ?)",
                      (i, rng.choice(vor), f"Schmidt{i}", round(rng.uniform(2e4, 8e4), 2),
                       rng.choice(abt)))  # fmt: skip
        for i, a in enumerate(abt, 1):
            c.execute("INSERT INTO abteilungen VALUES (?, ?, ?)", (i, a, f"Ort {i}"))
        for i in range(1, 31):
            c.execute("INSERT INTO standorte VALUES (?, ?, ?, ?)",
                      (i, f"Neustadt {i}", rng.choice(["Bayern", "Hessen", "Sachsen"]),
                       f"{rng.randint(10000, 99999)}"))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("share")
    src = _write_lake(out / "mostly_german.sqlite")
    return synthesize(SynthConfig([src], out / "suite", tasks=200, seed=0))


def test_the_suite_made_stays_half_unanswerable(suite) -> None:
    tasks = suite.tasks
    un = [t for t in tasks if not t.answerable]
    assert tasks and un, "the lake allows some tasks of both kinds"
    assert len(un) <= len(tasks) - len(un), Counter(t.category for t in tasks)
    assert any("tables not asked about" in k for k in suite.shortfalls), suite.shortfalls


def test_no_unanswerable_kind_fills_the_others_shares(suite) -> None:
    kinds = Counter(t.category for t in suite.tasks if not t.answerable)
    # 100 unanswerable asked for, 20 per kind: none may exceed 40 whatever the lake allows
    assert max(kinds.values()) <= 40, kinds


def test_the_share_is_kept_evenly_over_the_kinds() -> None:
    def task(i: int, cat: str, ans: bool) -> Task:
        if ans:
            return Task(id=str(i), db="x", utterance=f"q{i}", category=cat, gold_sql="SELECT 1")
        kind = cat.partition(":")[2]
        return Task(id=str(i), db="x", utterance=f"q{i}", category=cat, answerable=False,
                    unanswerable_kind=kind)  # fmt: skip

    chosen = [task(i, "well-specified", True) for i in range(4)]
    chosen += [task(10 + i, "unanswerable:non-sql", False) for i in range(6)]
    chosen += [task(20 + i, "unanswerable:out-of-domain", False) for i in range(2)]
    made = {"unanswerable": 8}
    short: dict[str, str] = {}
    _keep_unanswerable_share(chosen, made, short, {"unanswerable": 50}, 100)
    kinds = Counter(t.category for t in chosen if not t.answerable)
    assert kinds == {"unanswerable:non-sql": 2, "unanswerable:out-of-domain": 2}
    assert made["unanswerable"] == 4 and "unanswerable" in short
