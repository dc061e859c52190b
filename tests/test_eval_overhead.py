"""The eval command's overhead fixes: forked workers, gold order by tokens, metrics computed once."""

from __future__ import annotations

import multiprocessing as mp
import sys
import threading
from pathlib import Path

import pytest

from clarisql.envs.sandbox import database
from clarisql.envs.state.gold import _outer_order_by
from clarisql.rollouts import metrics, report
from clarisql.rollouts.engines.local import worker_start_method
from clarisql.rollouts.runner import RunConfig, run_eval
from clarisql.rollouts.store import read_trajectories


@pytest.mark.parametrize(
    ("sql", "ordered"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("SELECT a FROM t order by a DESC LIMIT 3", True),
        ("SELECT a, row_number() OVER (ORDER BY b) FROM t", False),
        ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", False),
        ("SELECT * FROM (SELECT a FROM t ORDER BY a) LIMIT 2", False),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", True),
        ("SELECT 'order by' FROM t", False),
    ],
)
def test_outer_order_by(sql: str, ordered: bool) -> None:
    assert _outer_order_by(sql) is ordered


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_workers_fork_only_when_single_threaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLARISQL_WORKER_START", raising=False)
    for name in ("torch", "tensorflow", "jax", "vllm"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    if threading.active_count() == 1:
        assert worker_start_method() == "fork"
        monkeypatch.setitem(sys.modules, "torch", sys)  # a native thread pool may be running
        assert worker_start_method() == "spawn"
        monkeypatch.delitem(sys.modules, "torch")
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert worker_start_method() == "spawn"  # a second thread could hold a lock at fork
    finally:
        stop.set()
        t.join()
    monkeypatch.setenv("CLARISQL_WORKER_START", "spawn")
    assert worker_start_method() == "spawn"
    monkeypatch.setenv("CLARISQL_WORKER_START", "sometimes")
    with pytest.raises(ValueError, match="CLARISQL_WORKER_START"):
        worker_start_method()


def _images_in_child(q: mp.Queue) -> None:
    q.put(len(database._IMAGES))


@pytest.mark.skipif(not hasattr(mp, "get_context") or sys.platform != "linux", reason="Linux")
def test_forked_child_drops_cached_images(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "d.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE t (a)").connection.commit()
    database.get_image(db)
    assert len(database._IMAGES) >= 1
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_images_in_child, args=(q,))
    p.start()
    p.join(60)
    assert q.get(timeout=60) == 0


def test_forked_and_spawned_workers_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = RunConfig(suite="builtin", policy="oracle", max_episodes=12)
    out = {}
    for how in ("spawn", "auto"):
        monkeypatch.setenv("CLARISQL_WORKER_START", how)
        o = run_eval(cfg, tmp_path / how, workers=2, progress=False, write_reports=False)
        assert o.complete and o.n_done == 12
        lines = read_trajectories(tmp_path / how / "trajectories.jsonl")
        out[how] = sorted((x["task_id"], x["reward"], x["correct"]) for x in lines)
    assert out["spawn"] == out["auto"]


def test_report_computes_episode_stats_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_eval(
        RunConfig(suite="builtin", policy="oracle", max_episodes=6),
        tmp_path / "r",
        progress=False,
        write_reports=False,
    )
    lines = list(read_trajectories(tmp_path / "r" / "trajectories.jsonl"))
    calls = []
    real = metrics.episode_stats

    def counting(line, spec=None):
        calls.append(1)
        return real(line, spec)

    monkeypatch.setattr(metrics, "episode_stats", counting)
    monkeypatch.setattr(report, "episode_stats", counting)
    m = report.write_run_reports(tmp_path / "r", lines)
    assert len(calls) == len(lines) == 6
    monkeypatch.setattr(metrics, "episode_stats", real)
    assert m["pass@1"] == metrics.compute_metrics(lines)["pass@1"]
