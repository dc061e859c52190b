"""The synthesized clarify layer draws its golds uniformly among readings an agent can compute:
the first stored value is a gold as often as any other (the earlier rule never kept it: the
first-row explorer picked it), no rank explorer beats chance, and no misspelled or cut-off value
has a unique nearest value among all values of its column."""

from __future__ import annotations

import random
import sqlite3
import sys
from collections import Counter
from pathlib import Path

from clarisql.envs.synth.audit import audit_folder
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.layers import clarify_tasks
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier

from ._benchmarks import bench

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from _synth_lake import write_lake  # noqa: E402

REGIONS = {"Alder": 30, "Birch": 40, "Cedar": 20, "Dogwood": 12, "Elm": 25}  # stored in this order


def _db(path: Path) -> Path:
    rng = random.Random(3)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE trips (trip_id INTEGER PRIMARY KEY, region TEXT, fare REAL)")
    rows = [(r, round(rng.uniform(5, 80), 2)) for r, n in REGIONS.items() for _ in range(n)]
    con.executemany("INSERT INTO trips (region, fare) VALUES (?, ?)", rows)
    con.commit()
    con.close()
    return path


def test_missing_scope_golds_cover_the_first_stored_value(tmp_path: Path) -> None:
    db = _db(tmp_path / "trips.sqlite")
    lake, v = discover(profile_lake(db)), Verifier(db)
    golds: Counter = Counter()
    for seed in range(6):
        for t in clarify_tasks(lake, [], v, random.Random(seed), 30):
            for u in t.underspecs:
                if u.label.kind == "Missing" and u.label.slot == "region":
                    golds[u.value] += 1
    assert sum(golds.values()) >= 12, golds
    assert "Birch" not in golds  # the commonest: the literal reading, never the gold
    # every other region is a gold; "Alder" (first row) was never one under the earlier rule
    assert set(golds) == {"Alder", "Cedar", "Dogwood", "Elm"}, golds


def _probe():
    return bench("explorer_audit")


def test_synthesized_suite_no_unique_nearest_value_and_no_rank_above_chance(
    tmp_path: Path,
) -> None:
    res = synthesize(
        SynthConfig(sources=[write_lake(tmp_path / "csv", seed=8)], out=tmp_path / "s", tasks=120)
    )
    report, tasks = audit_folder(res.tasks_path.parent)
    assert report.total("typo-with-unique-nearest-value") == 0, report.examples
    got = _probe().audit(tasks, next(res.tasks_path.parent.glob("*.sqlite")))
    assert got["above chance"] == []
    for kind, c in got["per kind"].items():
        assert c.get("gold outside readings", 0) == 0, (kind, c)
        assert c.get("gold ruled out by running it", 0) == 0, (kind, c)
