"""A name a user writes keeps the start of the name meant: a cut-off is the start of every value
it may stand for (never "Back" for "Holding Back The Years"), and a made-up name reads as the gold
misspelled (its head and a short ending of another value), never as another value's head with
the gold's tail glued on ("Gutincis" for Francis). The audit counts planted cases of both, and the
clarify layer makes none."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.explorers import HALF, made_from
from clarisql.envs.simulators.gate.kinds import value_problem
from clarisql.envs.synth.audit import audit_tasks
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers.clarify import _ClarifyGen, clarify_tasks
from clarisql.envs.synth.layers.surfaces import PARTIAL, WRONG, begins_alike, misnamed
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

TITLES = [
    "Back In Black", "Back To Black", "Backstreet Dreams", "Holding Back The Years",
    "Heaven Can Wait", "Wait For Me", "Waiting Room", "Come Back Home", "Home Sweet Home",
    "Sweet Home Chicago", "Bring It On Home", "Homeward Bound", "Sunset Boulevard",
    "Sunset Strip", "Sunshine Superman", "Yesterday Once More", "Yesterday Girl",
]  # fmt: skip
FIRST = ["Francis", "Frances", "Franklin", "Frank", "Gutierrez", "Darnell", "Michael", "Michelle",
         "Laura", "Lauren", "Grant", "Granger", "Nicholson", "Nicholas", "Reese", "Matthew"]  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("surf") / "music.sqlite"
    rng = random.Random(2)
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE tracks (track_id INTEGER PRIMARY KEY, name TEXT, milliseconds INTEGER,"
        " unit_price REAL);"
        "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT,"
        " last_name TEXT, total REAL);"
    )
    words = ["Night", "River", "Stone", "Fire", "Rain", "Summer", "Ghost", "Dream", "Road", "Star"]
    names = TITLES + [f"{a} {b}" for a in words for b in words if a != b][:60]
    for i, n in enumerate(names, 1):
        conn.execute(
            "INSERT INTO tracks VALUES (?, ?, ?, ?)",
            (i, n, rng.randint(100_000, 400_000), rng.choice([0.99, 1.99])),
        )
    for i in range(1, 81):
        conn.execute(
            "INSERT INTO customers VALUES (?, ?, ?, ?)",
            (i, FIRST[i % len(FIRST)], f"{rng.choice(words)}son", round(rng.uniform(1, 40), 2)),
        )
    conn.commit()
    conn.close()
    return path


def test_blends_keep_the_golds_start() -> None:
    rng = random.Random(0)
    for gold in ["Francis", "Nicholson", "Michaela", "Bangalore", "Toronto"]:
        others = [x for x in FIRST + ["Chicago", "Dublin", "Prague"] if x != gold]
        for _ in range(20):
            for s in misnamed(rng, gold, others):
                if " " in s or " " in gold:
                    continue
                assert begins_alike(s, gold), (s, gold)
                # the other value lends too short an ending to be read from it
                assert not any(
                    made_from(s, o) and not begins_alike(s, o)
                    for o in others
                    if len(o) >= HALF and s[-HALF:].casefold() == o[-HALF:].casefold()
                ), s
                assert value_problem("not-exist", s, gold) == WRONG


def test_value_surface_fits_only_values_that_begin_with_it(db: Path) -> None:
    lake, v = discover(profile_lake(db)), Verifier(db)
    gen = _ClarifyGen(lake, v, random.Random(4))
    vals = [r[0] for r in v.rows("SELECT name FROM tracks")]
    got_partial = 0
    for seed in TITLES:
        for _ in range(5):
            got = gen.value_surface(seed, vals, PARTIAL)
            if got is None:
                continue
            got_partial += 1
            s, fit = got
            assert all(x.casefold().startswith(s.casefold()) for x in fit), (s, fit)
    assert got_partial, "no cut-off made at all: the check above is blind"
    firsts = [r[0] for r in v.rows("SELECT DISTINCT first_name FROM customers")]
    for seed in firsts:
        for _ in range(5):
            got = gen.value_surface(seed, firsts, WRONG)
            if got is not None and got[0] in gen.made_up:
                assert all(begins_alike(got[0], x) for x in got[1]), got


def _t(i: int, surface: str, gold: str) -> Task:
    text = f'What is the length of the track "{surface}"?'
    return Task(
        id=f"c{i}", db="music.sqlite", utterance=text, category="where",
        gold_sql=f"SELECT milliseconds FROM tracks WHERE name = '{gold}'",
        underspecs=[Underspec(Label("not-exist", surface, "name"), gold)],
    )  # fmt: skip


def test_audit_counts_fragments_from_the_middle_and_tail_blends(db: Path) -> None:
    lake, v = discover(profile_lake(db)), Verifier(db)
    tasks = [
        _t(1, "Back", "Holding Back The Years"),  # a fragment from the middle
        _t(2, "Gutincis", "Francis"),  # another name with the gold's tail
        _t(3, "Back", "Back In Black"),  # the start: fine
        _t(4, "Franell", "Francis"),  # the gold misremembered: fine
        _t(5, "Bakc In Black", "Back In Black"),  # a misspelling: fine
    ]
    report = audit_tasks(tasks, lake, v)
    assert report.total("fragment-from-middle") == 1, report.examples
    assert report.total("blend-gold-is-tail") == 1, report.examples


def test_clarify_layer_makes_neither(db: Path) -> None:
    lake, v = discover(profile_lake(db)), Verifier(db)
    tasks = clarify_tasks(lake, [], v, random.Random(0), 40)
    report = audit_tasks(tasks, lake, v)
    assert report.total("fragment-from-middle") == 0, report.examples
    assert report.total("blend-gold-is-tail") == 0, report.examples
