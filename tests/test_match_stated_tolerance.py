"""Each task states the rounding it accepts (from its gold's own precision); Pass@1 applies it
through the episode, column order stays free, an extra column still fails, old records (no
stated tolerance) keep the default rule."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.tasks import Task, save_tasks
from clarisql.rewards.match import execution_match, stated_round_digits
from clarisql.rewards.record import EpisodeRecord
from clarisql.rewards.reliability import is_correct

AVG = "SELECT city, AVG(score) FROM sites GROUP BY city"
STORED = "SELECT name, lat FROM sites WHERE name = 'Oak'"


def test_the_gold_states_its_precision() -> None:
    assert stated_round_digits([("a", 2.6666666666666665)]) == 2  # computed
    assert stated_round_digits([("a", 40.7128), ("b", 3)]) == 0  # stored values
    assert stated_round_digits([(1,), (2,)]) == 0
    assert stated_round_digits(None) == 0


def _record(answer: list[list], gold: list[list], digits: int | None) -> EpisodeRecord:
    rec = EpisodeRecord(task_id="t", category="well-specified", answerable=True, writable=False)
    rec.answer_rows, rec.gold_rows, rec.end = answer, gold, "stop"
    rec.gold_round_digits = digits
    return rec


def test_a_stated_tolerance_is_what_scores() -> None:
    gold = [["Oak", 40.7128]]
    near = [["Oak", 40.71]]
    assert is_correct(_record(near, gold, None))  # the default rule (old records) accepts it
    assert not is_correct(_record(near, gold, 0))  # the task states: exact
    avg = [["Avon", 2.6666666666666665]]
    assert is_correct(_record([[2.67, "Avon"]], avg, 2))  # rounded and swapped
    assert not is_correct(_record([[2.7, "Avon"]], avg, 2))
    assert not is_correct(_record([["Avon", 2.67, 1]], avg, 2))  # extra column
    # the record keeps the stated tolerance through a save and a load (rescoring old runs)
    rec = _record(near, gold, 0)
    assert not is_correct(EpisodeRecord.from_dict(rec.to_dict()))
    old = rec.to_dict()
    del old["gold_round_digits"]
    assert is_correct(EpisodeRecord.from_dict(old))
    assert "gold_round_digits" not in _record(near, gold, None).to_dict()
    assert execution_match(near, gold) and not execution_match(near, gold, round_digits=0)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    db = tmp_path / "sites.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE sites (name TEXT, city TEXT, score INTEGER, lat REAL)")
    conn.executemany(
        "INSERT INTO sites VALUES (?, ?, ?, ?)",
        [("Oak", "Avon", 2, 40.7128), ("Elm", "Avon", 3, 41.5), ("Ash", "Avon", 3, 39.25),
         ("Yew", "Bree", 5, 38.125)],
    )  # fmt: skip
    conn.commit()
    conn.close()
    tasks = [
        Task(id="avg", db=str(db), utterance="Average score per city?", gold_sql=AVG,
             metadata={"round_digits": 2}),
        Task(id="lat", db=str(db), utterance="Latitude of Oak?", gold_sql=STORED,
             metadata={"round_digits": 0}),
    ]  # fmt: skip
    return save_tasks(tasks, tmp_path / "tasks.jsonl")


@pytest.mark.parametrize(
    ("task_id", "sql", "correct"),
    [
        ("avg", "SELECT ROUND(AVG(score), 2), city FROM sites GROUP BY city", True),
        ("avg", "SELECT city, ROUND(AVG(score), 1) FROM sites GROUP BY city", False),
        ("avg", "SELECT city, AVG(score), COUNT(*) FROM sites GROUP BY city", False),
        ("lat", "SELECT lat, name FROM sites WHERE name = 'Oak'", True),
        ("lat", "SELECT name, ROUND(lat, 2) FROM sites WHERE name = 'Oak'", False),
    ],
)
def test_the_episode_applies_the_task_tolerance(
    suite: Path, task_id: str, sql: str, correct: bool
) -> None:
    env = ClarifySQLEnv(str(suite))
    env.reset(options={"task_id": task_id})
    *_, info = env.step({"type": "stop", "sql": sql})
    assert info["episode"]["correct"] is correct
    assert env.record.gold_round_digits == {"avg": 2, "lat": 0}[task_id]
    env.close()
