"""Episode-core benchmark: reset, step and final-state digest, side by side with the naive way.

Run: ``python benchmarks/bench_core.py [--repeat N] [--json OUT]``. Measures, in one process and
one run (the machine is shared and noisy, so only ratios taken side by side are meaningful):

- write-episode reset: our private in-memory copy (deserialize from the cached image) vs copying
  the database file and opening the copy (the naive way);
- read-only reset: our pooled read-only handle (copies nothing) vs the same file copy;
- final-state digest after a one-table write: our incremental digest (changed tables only, the
  rest from the per-image cache) vs hashing every table after sorting its rows, and the state
  key the environment compares (changes only, no image totals); plus a check that all three
  make the same match decisions on a set of edits;
- env overhead per step: ``env.step`` time minus the time SQLite spent on the statement.

Databases: the built-in suite's database and DySQL-Bench's chinook from ../shared (skipped with a
note when absent).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits, _configure
from clarisql.envs.state.deferred import session_digest, session_state
from clarisql.envs.state.digest import DigestConfig, image_digest, sorted_state_hash
from clarisql.envs.suites import Suite, load_suite
from clarisql.envs.tasks import Task

CHINOOK = (
    Path(__file__).resolve().parents[1].parent
    / "shared/data/dysql/DySQL-Bench/dysql_bench/envs/chinook/data/chinook.sqlite"
)


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds per call over ``repeat`` calls (after 3 warm-up calls)."""
    for _ in range(3):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def bench_db(
    name: str, path: Path, edit_table: str, edits: list[str], repeat: int
) -> dict[str, float | bool | str]:
    img = DatabaseImage(path)
    tmpdir = Path(tempfile.mkdtemp())
    limits = SessionLimits()

    def naive_reset() -> None:
        dst = tmpdir / "copy.sqlite"
        shutil.copyfile(path, dst)
        c = apsw.Connection(str(dst))
        _configure(c)
        c.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        c.close()

    def our_write_reset() -> None:
        s = img.session(True, limits)
        s.execute("SELECT count(*) FROM sqlite_schema")
        s.close()

    def our_read_reset() -> None:
        s = img.session(False, limits)
        s.execute("SELECT count(*) FROM sqlite_schema")
        s.close()

    out: dict[str, float | bool | str] = {"db": name, "db_bytes": path.stat().st_size}
    out["reset_naive_copy_us"] = timeit(naive_reset, repeat) * 1e6
    out["reset_write_us"] = timeit(our_write_reset, repeat) * 1e6
    out["reset_read_us"] = timeit(our_read_reset, repeat) * 1e6
    out["write_reset_speedup"] = out["reset_naive_copy_us"] / out["reset_write_us"]
    with img.session(False, limits) as s:
        out["read_reset_copies_nothing"] = s.connection.filename == str(path.resolve())

    cfg = DigestConfig()
    image_digest(img, cfg)  # warm the per-image cache (done once per database per process)
    s = img.session(True, limits)
    assert s.execute(edits[0]).ok
    out["digest_ours_us"] = timeit(lambda: session_digest(s, cfg), repeat) * 1e6
    # what the environment compares now: the state key (changes only, no image totals)
    out["state_key_us"] = timeit(lambda: session_state(s, cfg).key(), repeat) * 1e6
    with s.trusted() as conn:
        out["digest_sorted_us"] = (
            timeit(lambda: sorted_state_hash(conn, cfg), max(3, repeat // 10)) * 1e6
        )
    s.close()
    out["digest_speedup"] = out["digest_sorted_us"] / out["digest_ours_us"]

    # same match decisions on a set of edits (including no-ops and reverts)
    ours, naive, keys = [], [], []
    for e in [[], *([x] for x in edits), edits]:
        with img.session(True, limits) as s2:
            for sql in e:
                s2.execute(sql)
            ours.append(session_digest(s2, cfg))
            keys.append(session_state(s2, cfg).key())
            with s2.trusted() as conn:
                naive.append(sorted_state_hash(conn, cfg))
    out["same_match_decisions"] = all(
        (ours[i] == ours[j]) == (naive[i] == naive[j]) == (keys[i] == keys[j])
        for i in range(len(ours))
        for j in range(len(ours))
    )
    shutil.rmtree(tmpdir, ignore_errors=True)
    return out


def bench_step_overhead(suite: Suite, task: Task, sql: str, repeat: int) -> float:
    """Median env.step time minus the statement's own SQLite time, in microseconds."""
    env = ClarifySQLEnv(suite, max_turns=10_000)
    env.reset(options={"task_id": task.id})
    action = {"type": "execute", "sql": sql}
    overheads = []
    for i in range(repeat + 3):
        t0 = time.perf_counter()
        *_, info = env.step(action)
        total = time.perf_counter() - t0
        if i >= 3:
            overheads.append(total - info["sql_time_s"])
    env.close()
    return statistics.median(overheads) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--json", type=Path, default=Path(__file__).parent / "out" / "bench_core.json")
    args = ap.parse_args(argv)

    builtin = load_suite("builtin")
    bpath = builtin.databases["builtin"].path
    results = []
    btable = next(t for t in builtin.tasks if t.writable)
    bedits = list(btable.gold_actions)
    results.append(
        bench_db(
            "builtin",
            bpath,
            "",
            [e for e in bedits if not e.lstrip().upper().startswith("SELECT")] or bedits,
            args.repeat,
        )
    )
    if CHINOOK.is_file():
        chinook_edits = [
            "UPDATE invoices SET Total = Total + 1 WHERE InvoiceId = 1",
            "UPDATE invoices SET Total = Total - 1 WHERE InvoiceId = 1",
            "INSERT INTO genres (Name) VALUES ('Polka')",
            "DELETE FROM playlist_track WHERE PlaylistId = 1 AND TrackId = 3402",
        ]
        results.append(bench_db("chinook", CHINOOK, "invoices", chinook_edits, args.repeat))
    else:
        print(f"note: {CHINOOK} is absent; chinook skipped", file=sys.stderr)

    read_task = next(t for t in builtin.tasks if not t.writable and t.answerable and t.gold_sql)
    overhead = {
        "builtin_select_1": bench_step_overhead(builtin, read_task, "SELECT 1", args.repeat),
        "builtin_gold_sql": bench_step_overhead(
            builtin, read_task, read_task.gold_sql or "SELECT 1", args.repeat
        ),
    }

    print(
        f"{'db':10} {'copy reset':>11} {'write reset':>12} {'x':>6} {'read reset':>11} {'no copy':>8} "
        f"{'sorted hash':>12} {'our digest':>11} {'x':>7} {'state key':>10} {'same':>5}"
    )
    for r in results:
        print(
            f"{r['db']:10} {r['reset_naive_copy_us']:9.0f}us {r['reset_write_us']:10.0f}us {r['write_reset_speedup']:6.1f} "
            f"{r['reset_read_us']:9.0f}us {str(r['read_reset_copies_nothing']):>8} {r['digest_sorted_us']:10.0f}us "
            f"{r['digest_ours_us']:9.0f}us {r['digest_speedup']:7.1f} {r['state_key_us']:8.0f}us "
            f"{str(r['same_match_decisions']):>5}"
        )
    for k, v in overhead.items():
        print(f"env overhead per step ({k}): {v:.1f} us (SQL time excluded)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"databases": results, "step_overhead_us": overhead}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
