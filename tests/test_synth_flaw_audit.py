"""The flaw audit catches each planted flaw (a probe that reports 0 must not be blind), and a
suite synthesized from a messy lake reads 0 in every category the generator owns."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.synth.audit import FLAWS, audit_folder, audit_tasks, review_sheet, stratified
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

from ._synth_lake import write_lake


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "air.sqlite"
    rng = random.Random(0)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE airports (airport_id INTEGER PRIMARY KEY, airport_code TEXT, name TEXT,
                               city TEXT, lat REAL, lon REAL);
        CREATE TABLE flights (flight_id INTEGER PRIMARY KEY, airport_id INTEGER,
                              airport_code TEXT, dep_hour INTEGER, seats INTEGER,
                              carrier_name TEXT, active TEXT);
        """
    )
    cities = ["Avon", "Bree", "Corin", "Dale", "Esk", "Fenn"]
    for i in range(1, 31):
        conn.execute(
            "INSERT INTO airports VALUES (?, ?, ?, ?, ?, ?)",
            (i, f"A{i:02d}", f"Field {i}", cities[i % 6], 40 + i / 7, -70 - i / 3),
        )
    for f in range(1, 301):
        a = rng.randint(1, 30)
        code = f"A{a:02d}" if f % 5 else f"A{(a % 30) + 1:02d}"  # the two keys disagree
        conn.execute(
            "INSERT INTO flights VALUES (?, ?, ?, ?, ?, ?, ?)",
            (f, a, code, rng.randint(0, 23), rng.randint(50, 300),
             rng.choice(["Sky Air", "Blue Jet", "Red Wings"]), rng.choice("YN")),
        )  # fmt: skip
    conn.commit()
    conn.close()
    return path


def _t(i: int, q: str, sql: str, **kw) -> Task:
    return Task(id=f"t{i}", db="air.sqlite", utterance=q, gold_sql=sql, **kw)


def test_every_planted_flaw_is_counted(db: Path) -> None:
    lake = discover(profile_lake(db))
    v = Verifier(db, max_rows=5000)
    join = '"flights"."airport_id" = "airports"."airport_id"'
    tasks = [
        _t(1, "How many flights per city?",
           f'SELECT "airports"."city", COUNT(*) FROM "flights" JOIN "airports" ON {join} '
           'GROUP BY "airports"."city"'),
        _t(2, "Total latitude per city?",
           'SELECT city, SUM(lat) FROM airports GROUP BY city'),
        _t(3, "What is the highest departure hour?", "SELECT MAX(dep_hour) FROM flights"),
        _t(4, "Average seats for each seats value?",
           "SELECT seats, AVG(seats) FROM flights GROUP BY seats"),
        _t(5, "What is the carrier_name of flight 3?",
           "SELECT carrier_name FROM flights WHERE flight_id = 3"),
        _t(6, "Give their active and seats.",
           "SELECT active, seats FROM flights WHERE seats > 290"),
        Task(id="t7", db="air.sqlite", utterance="What is the elevation of each airport?",
             answerable=False, unanswerable_kind="column-related", category="unanswerable:column-related",
             metadata={"requested": "latitude", "tables": ["airports"]}),
        _t(8, "How many flights leave from city 'Avn'?",
           "SELECT COUNT(*) FROM flights JOIN airports USING (airport_id) WHERE city = 'Avon'",
           category="where",
           underspecs=[Underspec(Label("not-exist", "Avn", "city"), "Avon")]),
    ]  # fmt: skip
    report = audit_tasks(tasks, lake, v)
    got = {f: report.total(f) for f in FLAWS}
    assert got == {
        "join-path-disagreement": 1,  # the code path gives other counts
        "aggregate-over-non-measure": 2,  # SUM(lat), MAX(dep_hour)
        "group-by-aggregated-column": 1,
        "unanswerable-with-matching-column": 1,  # 'latitude' is the column lat
        "typo-with-unique-nearest-value": 1,
        "raw-column-token": 1,
        "listed-answer-without-identifier": 1,
        "helper-table-subject": 0,  # planted in test_synth_helper_tables.py
        "list-column-as-category": 0,  # planted in test_synth_roles_review.py
        "write-row-not-identified": 0,  # these two: test_synth_write_review.py
        "which-table-given-away": 0,
        "swap-between-unrelated-rows": 0,  # these five: test_synth_write_sense.py
        "bulk-update-to-one-value": 0,
        "write-breaks-derived-total": 0,
        "doubled-noun": 0,
        "non-english-identifier": 0,
        "write-leaves-row-inconsistent": 0,  # planted in test_synth_row_consistency.py
        "sql-speak": 0,  # these four: test_synth_wording_gate.py
        "bad-plural": 1,  # "for each seats value"
        "own-id-list": 0,
        "swap-group-unnamed": 0,
        "swap-of-group-value": 0,
        "reply-sql-speak": 0,  # planted in test_reply_words.py
        "fragment-from-middle": 0,  # these two: test_synth_surface_start.py
        "blend-gold-is-tail": 0,
        "own-noun-called-name": 0,  # planted in test_synth_own_noun_key.py
    }, report.examples
    sheet = review_sheet(tasks, v, 4)
    assert sheet.count("Verdict:") == 4 and "**Gold SQL:**" in sheet
    assert len({t.category for t in stratified(tasks, 3)}) == 3


def test_a_synthesized_suite_has_none_of_the_generators_flaws(tmp_path: Path) -> None:
    res = synthesize(
        SynthConfig(sources=[write_lake(tmp_path / "csv", seed=8)], out=tmp_path / "s", tasks=80)
    )
    report, tasks = audit_folder(res.tasks_path.parent)
    owned = [f for f in FLAWS if f != "typo-with-unique-nearest-value"]  # (the clarify layer's)
    assert {f: report.total(f) for f in owned} == dict.fromkeys(owned, 0), report.examples
    assert sum(report.tasks.values()) == len(tasks) == 80
    # every answerable read task states the rounding it accepts, from its gold's precision
    reads = [t for t in tasks if t.answerable and not t.writable and t.gold_sql]
    assert reads and all(t.metadata.get("round_digits") in (0, 2) for t in reads)
    assert {t.metadata["round_digits"] for t in reads} == {0, 2}
