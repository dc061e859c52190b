"""Synthesis speed mechanisms keep the output: parallel verification, the numeric profile path.

Real SQLite throughout; the CSV lake is written by the test (tests/_synth_lake.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import apsw
import pytest

from clarisql.envs.synth import profile as profile_mod
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_column
from clarisql.envs.synth.verify import Verifier

from ._synth_lake import write_lake


def test_parallel_verification_gives_byte_identical_tasks(tmp_path: Path) -> None:
    folder = write_lake(tmp_path / "csv", seed=2)
    outs = []
    for workers in (1, 3):
        cfg = SynthConfig(sources=[folder], out=tmp_path / f"w{workers}", tasks=70, seed=5)
        cfg.workers = workers
        outs.append(synthesize(cfg))
    one, many = outs
    assert len(one.tasks) == 70
    assert many.tasks_path.read_bytes() == one.tasks_path.read_bytes()
    assert (many.tasks_path.parent / "lake.sqlite").read_bytes() == (
        one.tasks_path.parent / "lake.sqlite"
    ).read_bytes()


def _lake_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (k INTEGER, x REAL, n INTEGER, mix, coded INTEGER, s TEXT)")
    rows = [
        (i % 7, (i % 5) / 4, None if i % 3 == 0 else i % 11, i if i % 2 else i + 0.5, i, str(i))
        for i in range(300)
    ]
    rows.append((1, 0.25, 4, 7, "n/a", "x"))  # a text value in an INTEGER column
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return path


def test_numeric_profile_path_equals_general_path(tmp_path: Path, monkeypatch) -> None:
    db = _lake_db(tmp_path / "p.sqlite")
    conn = apsw.Connection(str(db))
    info = conn.execute("PRAGMA table_info(t)").fetchall()
    rows = conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]
    fast_used = [
        c[1] for c in info if profile_mod._numeric_column(conn, "t", c[1], c[2], rows) is not None
    ]
    assert fast_used == ["k", "x", "n"]  # mixed storage and text values take the general path
    fast = [profile_column(conn, "t", c[1], c[2], rows) for c in info]
    monkeypatch.setattr(profile_mod, "_numeric_column", lambda *a: None)
    general = [profile_column(conn, "t", c[1], c[2], rows) for c in info]
    assert fast == general
    k = fast[0]
    assert (k.kind, k.distinct, k.min, k.max, k.samples[:2]) == ("integer", 7, 0, 6, (1, 0))


def test_prefetch_gives_the_sequential_results(tmp_path: Path) -> None:
    db = _lake_db(tmp_path / "v.sqlite")
    sqls = [
        "SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k",
        "SELECT nope FROM t",
        "SELECT * FROM t",  # more than max_rows
        "DELETE FROM t",  # refused: read-only
        "SELECT MAX(x) FROM t",
    ]
    seq = Verifier(db, max_rows=50)
    expected = [(seq.rows(s), seq.last_error) for s in sqls]
    par = Verifier(db, max_rows=50, workers=2)
    par.prefetch(sqls)
    par.prefetch(sqls)  # running or cached statements are not started twice
    assert [(par.rows(s), par.last_error) for s in sqls] == expected
    assert par.executed == len(sqls)
    assert expected[0][0] and expected[1][0] is None and "no such column" in expected[1][1]
    assert "more than 50 rows" in expected[2][1] and expected[3][0] is None
    par.prefetch(["SELECT COUNT(*) FROM t"])
    par.discard_pending()
    assert par.rows("SELECT COUNT(*) FROM t") == [(301,)]
    par.close()
    par.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_step_budget_rejects_slow_statements(tmp_path: Path, workers: int) -> None:
    db = _lake_db(tmp_path / "b.sqlite")
    v = Verifier(db, step_budget=2_000_000, workers=workers)
    slow = (
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50000000) "
        "SELECT COUNT(*) FROM c"
    )
    v.prefetch([slow])
    assert v.rows(slow) is None
    assert "budget of 2,000,000 SQLite steps" in (v.last_error or "")
    assert v.rows("SELECT COUNT(*) FROM t") == [(301,)]
    v.close()


def test_profile_on_threads_equals_one_thread(tmp_path: Path) -> None:
    from clarisql.envs.synth.ingest import ingest
    from clarisql.envs.synth.profile import profile_lake

    db = ingest([write_lake(tmp_path / "csv", seed=4)], tmp_path / "lake")
    one = profile_lake(db)
    assert profile_lake(db, workers=3) == one
    assert [t.name for t in one.tables] == ["customers", "orders", "sales_2022", "sales_2023"]


#: synthesizes in a fresh interpreter (no thread of the test run in it, so forking is safe) and
#: prints how many stages ran in forked children: ``fork`` as is, ``no-fork`` with forking
#: refused, ``child-fails`` with every forked stage failing (the parent makes it again)
_FORK_RUN = """
import sys
from pathlib import Path
from clarisql.envs.synth import forked as F, pipeline as P
started = []
start = P._Forked.start.__func__
def counted(cls, *args, **kw):
    got = start(cls, *args, **kw)
    started.append(got is not None)
    return got
P._Forked.start = classmethod(counted)
mode = sys.argv[3]
if mode == "no-fork":
    F.fork_safe = lambda: False
if mode == "child-fails":
    def failing(v, fn, args, nice=0):
        raise RuntimeError("child failed")
    P._with_verifier = failing
cfg = P.SynthConfig(sources=[Path(sys.argv[1])], out=Path(sys.argv[2]), tasks=70, seed=5)
cfg.workers = 2
P.synthesize(cfg)
print(sum(started))
"""


def test_forked_stages_give_the_suite_made_on_threads(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = write_lake(tmp_path / "csv", seed=2)
    out = {}
    for mode in ("fork", "no-fork", "child-fails"):
        done = subprocess.run(
            [sys.executable, "-c", _FORK_RUN, str(folder), str(tmp_path / mode), mode],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        out[mode] = (int(done.stdout.split()[-1]), (tmp_path / mode / "tasks.jsonl").read_bytes())
    # the drafts, the unanswerable and the write layer ran in children (or were made again)
    assert out["fork"][0] == 3 and out["child-fails"][0] == 3 and out["no-fork"][0] == 0
    assert out["fork"][1] == out["no-fork"][1] == out["child-fails"][1]


def test_verifier_results_carry_to_another_verifier(tmp_path: Path) -> None:
    db = _lake_db(tmp_path / "r.sqlite")
    a = Verifier(db, max_rows=50)
    sqls = ["SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k", "SELECT nope FROM t"]
    expected = [(a.rows(s), a.last_error) for s in sqls]
    b = Verifier(db, max_rows=50)
    b.remember(a.results())
    assert [(b.rows(s), b.last_error) for s in sqls] == expected
    assert b.executed == 0  # answered from what the other verifier ran


def test_no_fork_beside_another_thread_or_a_native_pool(monkeypatch) -> None:
    import sys
    import threading

    from clarisql.envs.synth import forked

    monkeypatch.setattr(forked.sys, "platform", "linux")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="someone-else")
    other.start()
    try:
        assert not forked.fork_safe()  # (a lock it holds could be inherited half-held)
        assert forked.Forked.start(print) is None and forked.fork_pool(2) is None
    finally:
        stop.set()
        other.join()
    monkeypatch.setitem(sys.modules, "torch", sys.modules[__name__])
    assert not forked.fork_safe()
