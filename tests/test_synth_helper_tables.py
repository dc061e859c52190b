"""Helper tables (calendars, number sequences) are told by structure and values, never asked
about, and the audit counts a task about one (planted)."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.audit import audit_folder, audit_tasks
from clarisql.envs.synth.discover import discover, helper_tables
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Task

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
HELPERS = {"cal_days", "week_list", "month_grid", "counter"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("helpers") / "agency.sqlite"
    rng = random.Random(3)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE clients (client_id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
        CREATE TABLE bookings (booking_id INTEGER PRIMARY KEY, client_id INTEGER
                               REFERENCES clients(client_id), start_date TEXT, fee REAL,
                               confirmed TEXT);
        CREATE TABLE events (event_id INTEGER PRIMARY KEY, held_on TEXT, public TEXT);
        CREATE TABLE cal_days (d TEXT);
        CREATE TABLE week_list (first_day TEXT, last_day TEXT);
        CREATE TABLE month_grid (label TEXT, yr INTEGER, mo INTEGER, starts TEXT,
                                 January INTEGER, February INTEGER, March INTEGER);
        CREATE TABLE counter (n INTEGER);
        CREATE TABLE slots (slot_day TEXT PRIMARY KEY);
        CREATE TABLE shifts (shift_id INTEGER PRIMARY KEY, slot_day TEXT
                             REFERENCES slots(slot_day), hours REAL);
        """
    )
    cities = ["Avon", "Bree", "Corin", "Dale", "Esk"]
    first = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana"]
    last = ["Moreau", "Novak", "Okafor", "Perez", "Quinn"]
    names = [f"{f} {s}" for f in first for s in last]
    for i, n in enumerate(names, 1):
        conn.execute("INSERT INTO clients VALUES (?, ?, ?)", (i, n, rng.choice(cities)))
    day0 = dt.date(2021, 1, 1)
    for b in range(1, 201):
        when = day0 + dt.timedelta(days=rng.randint(0, 700))
        conn.execute(
            "INSERT INTO bookings VALUES (?, ?, ?, ?, ?)",
            (b, rng.randint(1, len(names)), when.isoformat(), round(rng.uniform(80, 900), 2),
             rng.choice("YN")),
        )  # fmt: skip
    for e in range(1, 41):  # a data table: consecutive ids, irregular dates, a flag
        when = day0 + dt.timedelta(days=rng.randint(0, 700))
        conn.execute("INSERT INTO events VALUES (?, ?, ?)", (e, when.isoformat(), rng.choice("YN")))
    for k in range(730):
        conn.execute(
            "INSERT INTO cal_days VALUES (?)", ((day0 + dt.timedelta(days=k)).isoformat(),)
        )
    for k in range(104):
        a = day0 + dt.timedelta(days=7 * k)
        conn.execute(
            "INSERT INTO week_list VALUES (?, ?)",
            (a.isoformat(), (a + dt.timedelta(days=6)).isoformat()),
        )
    for k in range(24):
        y, m = 2021 + k // 12, k % 12 + 1
        flags = [int(m == j) for j in (1, 2, 3)]
        conn.execute(
            "INSERT INTO month_grid VALUES (?, ?, ?, ?, ?, ?, ?)",
            (f"{MONTHS[m - 1]} {y}", y, m, f"{y}-{m:02d}-01", *flags),
        )
    for k in range(1, 61):
        conn.execute("INSERT INTO counter VALUES (?)", (k,))
    for k in range(60):  # a calendar the data refers to: a table of its own, not a helper
        conn.execute("INSERT INTO slots VALUES (?)", ((day0 + dt.timedelta(days=k)).isoformat(),))
    for s in range(1, 121):
        day = (day0 + dt.timedelta(days=rng.randint(0, 59))).isoformat()
        conn.execute("INSERT INTO shifts VALUES (?, ?, ?)", (s, day, rng.randint(2, 9) + 0.5))
    conn.commit()
    conn.close()
    return path


def test_helper_tables_are_told_by_structure_and_values(db: Path) -> None:
    lake = profile_lake(db)
    assert set(helper_tables(lake)) == HELPERS  # not events (irregular), not slots (linked)
    found = discover(lake)
    assert {t.name for t in found.helpers} == HELPERS
    assert not HELPERS & {t.name for t in found.tables}
    assert not any(j.left[0] in HELPERS or j.right[0] in HELPERS for j in found.joins)


def test_no_task_is_about_a_helper_table_and_the_audit_would_say(db: Path, tmp_path: Path) -> None:
    res = synthesize(SynthConfig(sources=[db], out=tmp_path / "s", tasks=120, seed=1))
    report, tasks = audit_folder(res.tasks_path.parent)
    assert report.total("helper-table-subject") == 0, report.examples["helper-table-subject"]
    text = res.tasks_path.read_text(encoding="utf-8")
    for name in HELPERS:
        assert f'"{name}"' not in text, name
    # the probe is not blind: planted tasks about helper tables are counted
    lake = discover(profile_lake(db))
    planted = [
        Task(id="p1", db="x", utterance="How many days are there in 2021?",
             gold_sql="SELECT COUNT(*) FROM cal_days WHERE d LIKE '2021%'"),
        Task(id="p2", db="x", utterance="Delete the counter 48.", writable=True,
             gold_actions=["DELETE FROM counter WHERE n = 48"], category="write"),
        Task(id="p3", db="x", utterance="What is the boiling point of the month 'May 2021'?",
             answerable=False, unanswerable_kind="column-unrelated",
             category="unanswerable:column-unrelated", metadata={"tables": ["month_grid"]}),
        Task(id="p4", db="x", utterance="How many bookings are there?",
             gold_sql="SELECT COUNT(*) FROM bookings"),
    ]  # fmt: skip
    v = Verifier(db)
    try:
        got = audit_tasks(planted, lake, v)
    finally:
        v.close()
    assert got.total("helper-table-subject") == 3, got.examples
    assert len(tasks) > 60
