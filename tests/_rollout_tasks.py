"""A tiny task file over a real SQLite database, for the rollout/metrics/policy tests.

Loaded by path from the test modules (``load_fixture_module``), since tests run with
``--import-mode=importlib``. Covers every report category kind: well-specified, select, from,
where, mixed, an unanswerable request and a write task.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from clarisql.envs.tasks import Label, Task, Underspec, save_tasks

CITIES = ("Riverton", "Lakemont", "Ashford Bay", "Stonebridge", "Westhaven", "Maplewood")
# Busy work inside SQLite (~tens of ms) to make episodes slow enough to kill a run mid-way.
SLOW = "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) SELECT count(*) FROM c)"


def build_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE sales_2023 (city TEXT, district TEXT, amount INTEGER);
        CREATE TABLE sales_2024 (city TEXT, district TEXT, amount INTEGER);
        CREATE TABLE firms (name TEXT PRIMARY KEY, city TEXT, employees INTEGER);
        """
    )
    for i, city in enumerate(CITIES):
        for j, district in enumerate(("Old Town", "Harbour", "Hillside")):
            conn.execute(
                "INSERT INTO sales_2023 VALUES (?, ?, ?)", (city, district, 100 + 10 * i + j)
            )
            conn.execute(
                "INSERT INTO sales_2024 VALUES (?, ?, ?)", (city, district, 200 + 10 * i + j)
            )
        conn.execute("INSERT INTO firms VALUES (?, ?, ?)", (f"{city} Holdings Ltd", city, 10 + i))
        conn.execute("INSERT INTO firms VALUES (?, ?, ?)", (f"{city} Works", city, 50 + i))
    conn.commit()
    conn.close()
    return path


def make_tasks(n_cities: int = len(CITIES), slow: int = 0) -> list[Task]:
    """Seven tasks per city (one per category kind). ``slow`` > 0 adds busy work to gold SQL."""
    extra = f" + 0 * {SLOW.format(n=slow)}" if slow else ""
    tasks: list[Task] = []
    for city in CITIES[:n_cities]:
        c = city.lower().replace(" ", "_")
        total = f"SELECT sum(amount){extra} FROM sales_2024 WHERE city = '{city}'"
        tasks += [
            Task(
                id=f"{c}/well",
                db="db.sqlite",
                utterance=f"Total 2024 sales in {city}?",
                gold_sql=total,
            ),
            Task(
                id=f"{c}/from",
                db="db.sqlite",
                category="from",
                utterance=f"Total sales in {city}?",
                gold_sql=total,
                underspecs=[Underspec(Label("Missing", "", "year"), "2024")],
                metadata={"naive_sql": f"SELECT sum(amount) FROM sales_2023 WHERE city = '{city}'"},
            ),
            Task(
                id=f"{c}/where",
                db="db.sqlite",
                category="where",
                utterance=f"How many employees has {city} Holdings?",
                gold_sql=f"SELECT employees{extra} FROM firms WHERE name = '{city} Holdings Ltd'",
                underspecs=[
                    Underspec(
                        Label("not-exist", f"{city} Holdings", "enterprise"), f"{city} Holdings Ltd"
                    )
                ],
                metadata={
                    "naive_sql": f"SELECT employees FROM firms WHERE name = '{city} Holdings'"
                },
            ),
            Task(
                id=f"{c}/select",
                db="db.sqlite",
                category="select",
                utterance=f"Tell me about firms in {city}.",
                gold_sql=f"SELECT count(*){extra} FROM firms WHERE city = '{city}'",
                underspecs=[Underspec(Label("intent"), "I want the number of firms.")],
                metadata={"naive_sql": f"SELECT * FROM firms WHERE city = '{city}'"},
            ),
            Task(
                id=f"{c}/mixed",
                db="db.sqlite",
                category="mixed",
                utterance=f"Sales of {city} Holdings' district?",
                gold_sql=f"SELECT sum(amount){extra} FROM sales_2024 WHERE city = '{city}' AND district = 'Harbour'",
                underspecs=[
                    Underspec(Label("Missing", "", "year"), "2024"),
                    Underspec(Label("Missing", "", "district"), "Harbour"),
                ],
                metadata={"naive_sql": f"SELECT sum(amount) FROM sales_2023 WHERE city = '{city}'"},
            ),
            Task(
                id=f"{c}/unans",
                db="db.sqlite",
                category="unanswerable:column-unrelated",
                utterance=f"What is the favourite colour of the mayor of {city}?",
                answerable=False,
                unanswerable_kind="column-unrelated",
            ),
            Task(
                id=f"{c}/write",
                db="db.sqlite",
                category="write",
                writable=True,
                utterance=f"Register a firm 'New {city} Co' in {city} with 3 employees.",
                gold_actions=[f"INSERT INTO firms VALUES ('New {city} Co', '{city}', 3)"],
            ),
        ]
    return tasks


def build_task_file(folder: Path, n_cities: int = len(CITIES), slow: int = 0) -> Path:
    """Write ``db.sqlite`` and ``tasks.jsonl`` into ``folder``; return the task file."""
    folder.mkdir(parents=True, exist_ok=True)
    build_db(folder / "db.sqlite")
    return save_tasks(make_tasks(n_cities, slow), folder / "tasks.jsonl")
