"""Scoring a whole DySQL episode: clarisql's digest vs DySQL-Bench's sort-every-table hash.

For every task of chinook, music and pagila the "agent" plays the golden actions in a sandboxed
session (the episode's final state); then the episode is scored both ways:

- clarisql: the final state's key (``session_state(...).key()``: the changes of the tables the
  session wrote, read by key; no image table hashed) against the gold state's key. *cold*: the gold
  digest is computed now (golden replay on a fresh private copy + its digest); *warm*: the gold
  digest is already cached (every later episode of the task, e.g. Pass^k trials or RL epochs).
- DySQL-Bench: its hash of the final state (read every listed table, ``ORDER BY`` all columns)
  plus a golden replay on a fresh copy and the same hash again, as upstream does at the end of
  every episode (its copy of the database file is not counted: we replay in memory).

Both must agree that the episode succeeded. Prints a table and writes
``benchmarks/out/bench_dysql_digest.json``. Run: ``python benchmarks/bench_dysql_digest.py``
(``--data`` for another DySQL folder, ``--repeat`` for more timing rounds).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import warnings
from pathlib import Path

from clarisql.envs.sandbox.database import DatabaseImage, Session, get_image
from clarisql.envs.state import gold
from clarisql.envs.state.deferred import session_state
from clarisql.envs.state.digest import image_digest
from clarisql.envs.suites.dysql import MissingDatabaseWarning, dysql_bench_hash, dysql_suite
from clarisql.envs.tasks import Task

DBS = ("chinook", "music", "pagila")
OUT = Path(__file__).resolve().parent / "out" / "bench_dysql_digest.json"


def replay(image: DatabaseImage, sqls: list[str]) -> Session:
    s = image.session(writable=True)
    for q in sqls:
        res = s.execute(q)
        assert res.ok, (q, res.error)
    return s


def ours(task: Task, image: DatabaseImage, final: Session, cfg, cold: bool) -> tuple[float, bool]:
    if cold:
        gold._STATES.clear()  # benchmark only: force the golden replay
    t0 = time.perf_counter()
    d = session_state(final, cfg).key()
    g = gold.gold_digest(task, image, cfg)
    return time.perf_counter() - t0, d == g


def upstream(task: Task, image: DatabaseImage, final: Session, order) -> tuple[float, bool]:
    t0 = time.perf_counter()
    with final.trusted() as conn:
        h = dysql_bench_hash(conn, order)
    g = replay(image, task.gold_actions)
    with g.trusted() as conn:
        hg = dysql_bench_hash(conn, order)
    g.close()
    return time.perf_counter() - t0, h == hg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data", default=None, help="DySQL data folder (default: ../shared/data/dysql)"
    )
    ap.add_argument(
        "--repeat", type=int, default=3, help="timing rounds per task (the minimum is kept)"
    )
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingDatabaseWarning)
        suite = dysql_suite(data=args.data, db=",".join(DBS))
    rows = []
    for name in DBS:
        spec = suite.databases[name]
        cfg, order = spec.digest, spec.digest.table_order
        image = get_image(spec.path, spec.post_copy_sql)
        t0 = time.perf_counter()
        image_digest(image, cfg)  # fills the per-image table cache once
        fill_s = time.perf_counter() - t0
        with image.reading() as master:
            present = {
                r[0] for r in master.execute("SELECT name FROM sqlite_schema WHERE type='table'")
            }
            n_rows = sum(
                master.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                for t in order
                if t in present
            )
        tasks = [t for t in suite.tasks if t.db == name]
        cold, warm, up = [], [], []
        for t in tasks:
            final = replay(image, t.gold_actions)
            c = min(ours(t, image, final, cfg, cold=True) for _ in range(args.repeat))
            w = min(ours(t, image, final, cfg, cold=False) for _ in range(args.repeat))
            u = min(upstream(t, image, final, order) for _ in range(args.repeat))
            final.close()
            assert c[1] and w[1] and u[1], f"{t.id}: the golden replay must match both ways"
            cold.append(c[0])
            warm.append(w[0])
            up.append(u[0])
        rows.append(
            {
                "db": name,
                "tasks": len(tasks),
                "rows_hashed_by_dysql": n_rows,
                "image_cache_fill_ms": fill_s * 1e3,
                "ours_cold_ms_mean": statistics.mean(cold) * 1e3,
                "ours_cold_ms_median": statistics.median(cold) * 1e3,
                "ours_warm_ms_mean": statistics.mean(warm) * 1e3,
                "ours_warm_ms_median": statistics.median(warm) * 1e3,
                "dysql_ms_mean": statistics.mean(up) * 1e3,
                "dysql_ms_median": statistics.median(up) * 1e3,
                "speedup_cold": statistics.mean(up) / statistics.mean(cold),
                "speedup_warm": statistics.mean(up) / statistics.mean(warm),
            }
        )

    try:
        from rich.console import Console
        from rich.table import Table

        table = Table(
            title="Scoring one DySQL episode (golden replay as the agent), ms per episode"
        )
        for col in (
            "db",
            "tasks",
            "rows",
            "ours cold",
            "ours warm",
            "DySQL-Bench",
            "x cold",
            "x warm",
        ):
            table.add_column(col, justify="left" if col == "db" else "right")
        for r in rows:
            table.add_row(
                r["db"],
                str(r["tasks"]),
                f"{r['rows_hashed_by_dysql']:,}",
                f"{r['ours_cold_ms_mean']:.2f}",
                f"{r['ours_warm_ms_mean']:.2f}",
                f"{r['dysql_ms_mean']:.2f}",
                f"{r['speedup_cold']:.1f}",
                f"{r['speedup_warm']:.1f}",
            )
        Console().print(table)
    except ImportError:  # pragma: no cover - rich is a core dependency
        for r in rows:
            print(r)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "benchmark": "dysql_digest",
                "machine": {"python": platform.python_version(), "platform": platform.platform()},
                "repeat": args.repeat,
                "results": rows,
            },
            indent=2,
        )
    )
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
