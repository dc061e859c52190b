"""Answers, not readings, are what an agent that never asks picks among, and a made-up name reads
only as the values it could be made from.

- The gold of an unclear part is uniform over its readings' distinct answers (then over the
  readings giving it): where six of seven regions count the same rows, an agent that runs every
  reading and answers the commonest count must not be right 6 times in 7.
- A name the data lacks ("Toroblin": Toronto's head, Dublin's tail) reads as Toronto or Dublin,
  never as Amsterdam.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

from clarisql.envs.explorers import answer_groups, answer_picks, fitting, made_from, readings
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import clarify_tasks
from clarisql.envs.synth.layers.clarify import _ClarifyGen
from clarisql.envs.synth.layers.surfaces import WRONG, misnamed
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier, same_answer

#: rows per region, every fare the same: six regions give one count (and one sum)
REGIONS = {"Zeta": 30, "Alder": 10, "Birch": 10, "Cedar": 10, "Dogwood": 10, "Elm": 10}
REGIONS |= {"Fir": 10, "Gum": 17}
SHARED = {r for r, n in REGIONS.items() if n == 10}

CITIES = (
    "Toronto Dublin Amsterdam Berlin Budapest Lisbon London Ottawa Porto Madrid Vienna Prague "
    "Warsaw Helsinki Oslo Stockholm Copenhagen Brussels Paris Rome Milan Naples Geneva Zurich "
    "Munich Hamburg Frankfurt Cologne Stuttgart Dresden"
).split()


def _trips(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE trips (trip_id INTEGER PRIMARY KEY, region TEXT, fare REAL)")
    rows = [(r, 5.0) for r, n in REGIONS.items() for _ in range(n)]
    con.executemany("INSERT INTO trips (region, fare) VALUES (?, ?)", rows)
    con.commit()
    con.close()
    return path


def test_answer_mode_explorer_picks_the_commonest_answer() -> None:
    reads = ["A", "B", "C", "D"]
    answers = [[(7,)], [(9,)], [(7,)], [(2,)]]
    picks = answer_picks(reads, answers, same_answer)
    assert picks["answer-mode"] in ("A", "C")
    assert picks["answer-max"] == "B" and picks["answer-min"] == "D"
    assert answer_groups(answers, same_answer) == [[0, 2], [1], [3]]


def test_missing_scope_gold_is_uniform_over_answers(tmp_path: Path) -> None:
    db = _trips(tmp_path / "trips.sqlite")
    lake, v = discover(profile_lake(db)), Verifier(db)
    golds: Counter = Counter()
    for seed in range(80):  # a suite asks the question once (its literal reading is its key)
        for t in clarify_tasks(lake, [], v, random.Random(seed), 8):
            for u in t.underspecs:
                if u.label.kind == "Missing" and u.label.slot == "region":
                    golds[u.value] += 1
    n = sum(golds.values())
    assert n >= 60, golds
    # the readings (Zeta, the commonest, is the literal reading) give two answers: 10 rows
    # (six regions) or 17 (Gum). Uniform over readings, 6 golds in 7 count 10 rows and the
    # commonest answer wins 86 % of the time; uniform over answers, half of them
    shared = sum(k for r, k in golds.items() if r in SHARED)
    assert shared <= 0.7 * n, golds
    assert golds["Gum"] >= 0.3 * n, golds


def test_made_up_name_reads_as_the_names_it_was_made_from() -> None:
    vals = ["Toronto", "Dublin", "Amsterdam", "Fort Worth", "Dijon", "Fortaleza"]
    assert readings("Toroblin", vals) == ["Toronto", "Dublin"]
    assert readings("Fort Dijon", vals) == ["Fort Worth", "Dijon"]
    assert made_from("Srivastardon", "Gordon") and made_from("Srivastardon", "Srivastava")
    assert not made_from("Torublin", "Amsterdam")
    assert readings("2031", [2019, 2020]) == [2019, 2020]  # a year outside the data: every one


def test_misnamed_reads_as_the_gold_misspelled() -> None:
    rng = random.Random(0)
    made = 0
    for gold in CITIES:
        others = [c for c in CITIES if c != gold]
        for s in misnamed(rng, gold, others):
            made += 1
            assert made_from(s, gold), (gold, s)  # the gold is one of its readings
            assert s[:4].casefold() == gold[:4].casefold(), (gold, s)  # it begins as the gold
    assert made


#: names that share their beginnings: a made-up name reads as several of them
FIRST = ("Francis Frances Franklin Frank Gutierrez Darnell Michael Michelle Laura Lauren Grant "
         "Granger Nicholson Nicholas Reese Matthew").split()  # fmt: skip


def test_misremembered_surface_readings_are_related(tmp_path: Path) -> None:
    db = tmp_path / "cities.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE stops (stop_id INTEGER PRIMARY KEY, city TEXT, fare REAL)")
    con.executemany(
        "INSERT INTO stops (city, fare) VALUES (?, ?)",
        [(c, float(i + k)) for i, c in enumerate(FIRST) for k in range(3)],
    )
    con.commit()
    con.close()
    lake, v = discover(profile_lake(db)), Verifier(db)
    made = 0
    for seed in range(80):
        gen = _ClarifyGen(lake, v, random.Random(seed))
        got = gen.value_surface(FIRST[seed % len(FIRST)], list(FIRST), WRONG)
        if got is None or fitting(got[0], FIRST) is not None:
            continue  # a misspelling (within a typo's reach), not a made-up name
        made += 1
        surface, reads = got
        assert FIRST[seed % len(FIRST)] in reads and len(reads) >= 2
        assert all(made_from(surface, r) for r in reads), (surface, reads)
        assert len(reads) < len(FIRST), (surface, reads)  # before: every name was a reading
        assert gen.column_readings("stops", "city", surface) == reads
    assert made >= 5
