"""Large databases: cold start, memory of concurrent write episodes, reset and digest ratios.

For each ``--sizes`` (MB; default ``1 100``, add ``1000`` for the 1 GB row) a database of that
size is generated (one wide table plus a small one) with a write task, and measured side by side:

- cold start: a fresh process with an empty cache runs its first write episode to the end
  (env, reset, one write, stop, final and gold digests), wall and CPU time; the same for an
  episode that writes one row of the big table (the gold write); then a fresh process with the
  digest cache on disk does the first again;
- 32 concurrent write episodes in one process (each wrote a row): the process's RSS;
- a second process running an episode on the same database while a first one holds 32 write
  episodes open: its RSS and private memory over its own state after importing clarisql;
- reset (copy-on-write reset after a write) against copying the file, and the episode's final
  digest (on-disk cache, changed rows only) and state key (changes only, no image totals)
  against sorting and hashing every table; ``memcpy`` of the database's bytes beside them as
  the physical limit;
- the full pass (every table hashed, as when an image digest is first needed) against the
  per-row loop it replaced, wall and CPU time.

Every child process has a timeout; the run stops by itself.

    python benchmarks/bench_scale.py [--sizes 1 100 1000] [--json OUT] [--baseline PYTHONPATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import apsw

ROW_BYTES = 200


def build(dirpath: Path, mb: int) -> Path:
    db = dirpath / f"db{mb}.sqlite"
    conn = apsw.Connection(str(db))
    rows = max(1000, mb * 1_000_000 // ROW_BYTES)
    conn.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
    conn.execute(
        "CREATE TABLE events(id INTEGER PRIMARY KEY, a INTEGER, b REAL, c TEXT);"
        "CREATE TABLE small(k INTEGER PRIMARY KEY, w TEXT);"
        "INSERT INTO small VALUES (1, 'a'), (2, 'b');"
    )
    conn.execute(
        f"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r LIMIT {rows}) "
        "INSERT INTO events SELECT x, x * 7 % 1000, x / 3.0, hex(randomblob(80)) FROM r"
    )
    conn.close()
    task = {
        "id": "w",
        "db": db.name,
        "utterance": "Rename item 1 to z.",
        "category": "write",
        "writable": True,
        "gold_actions": ["UPDATE small SET w = 'z' WHERE k = 1"],
    }
    big = {  # a write to the big table: compared by its changed rows, never hashed whole
        **task,
        "id": "w-big",
        "utterance": "Set a to -1 for event 7.",
        "gold_actions": ["UPDATE events SET a = -1 WHERE id = 7"],
    }
    (dirpath / f"tasks{mb}.jsonl").write_text(json.dumps(task) + "\n" + json.dumps(big) + "\n")
    return db


CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    t0 = time.perf_counter()
    from clarisql.envs.env import ClarifySQLEnv
    mode, tasks, n, task_id, sql = sys.argv[1:6]
    n = int(n)
    def rss(field="VmRSS:"):  # VmHWM: this process's peak (ru_maxrss survives exec)
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    def private():  # pages this process alone holds (the shared file cache excluded)
        kb = 0
        for line in open("/proc/self/smaps_rollup"):
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                kb += int(line.split()[1])
        return kb / 1024
    t_import = time.perf_counter()
    cpu_import = time.process_time()
    rss_import, private_import = rss(), private()
    envs = [ClarifySQLEnv(tasks) for _ in range(n)]
    for i, env in enumerate(envs):
        env.reset(seed=i, options={"task_id": task_id})
        env.step({"type": "execute", "sql": sql.format(i=100 + i)})
    rss_open = rss()
    first = None
    for env in envs:
        _, _, term, _, info = env.step({"type": "stop"})
        assert term
        if first is None:
            first = time.perf_counter() - t_import
            first_cpu = time.process_time() - cpu_import
            correct = info["episode"]["correct"]
    print(json.dumps({"first_episode_s": first, "first_episode_cpu_s": first_cpu,
                      "correct": correct,
                      "rss_import_mb": rss_import,
                      "rss_open_mb": rss_open, "rss_end_mb": rss(),
                      "added_rss_mb": rss() - rss_import,
                      "added_private_mb": private() - private_import,
                      "peak_rss_mb": rss("VmHWM:")}),
          flush=True)
    if mode == "hold":  # keep the sessions' process alive until the parent says
        sys.stdin.read()
    """
)


SMALL_WRITE = ("w", "INSERT INTO small VALUES ({i}, 'x')")  # i: 100 + the episode's index
BIG_WRITE = ("w-big", "UPDATE events SET a = -1 WHERE id = 7")  # the gold write: correct


def child(
    tasks: Path,
    cache: Path,
    n: int,
    timeout: float = 900,
    pythonpath: str | None = None,
    episode: tuple[str, str] = SMALL_WRITE,
) -> dict:
    env = {**os.environ, "CLARISQL_CACHE_DIR": str(cache)}
    if pythonpath:  # another checkout of clarisql (--baseline)
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "x", str(tasks), str(n), *episode],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def second_process(tasks: Path, cache: Path, sessions: int, timeout: float = 900) -> dict:
    """A process with ``sessions`` write episodes on the database stays alive while a second
    process runs an episode on it: the second one's memory over its own imports."""
    env = {**os.environ, "CLARISQL_CACHE_DIR": str(cache)}
    holder = subprocess.Popen(
        [sys.executable, "-c", CHILD, "hold", str(tasks), str(sessions), *SMALL_WRITE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = json.loads(holder.stdout.readline())  # the holder's sessions are open
        second = child(tasks, cache, 1, timeout)
    finally:
        holder.communicate("", timeout=timeout)
    return {"holder": first, "second": second}


def timed(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def cpu_and_wall(fn) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def legacy_full_pass(conn: apsw.Connection, cfg) -> str:
    """The full pass before vectorisation (f551ad0): one Python integer sum step per row."""
    import hashlib

    from clarisql.envs.state import digest as dg

    out = {}
    for t in dg._ordered(dg.list_tables(conn), cfg):
        cols = dg._digest_columns(conn, t, cfg)
        total = count = 0
        for (s,) in conn.execute(f"SELECT {dg._row_expr(cols)} FROM {dg._qi(t)}"):
            h = hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            total += int.from_bytes(h, "little")
            count += 1
        out[t] = dg.TableDigest(cols, count, total % (1 << 128))
    return dg.combine(out, cfg)


def ratios(db: Path, tasks: Path) -> dict:
    from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
    from clarisql.envs.state.deferred import session_digest, session_state
    from clarisql.envs.state.digest import (
        DigestConfig,
        connection_digest,
        sorted_state_hash,
    )

    img = DatabaseImage(db)
    cfg = DigestConfig()
    limits = SessionLimits()
    with img.session(True, limits) as s:  # warm: digest cache, pool
        s.execute("UPDATE small SET w = 'q' WHERE k = 2")
        session_digest(s, cfg)
    data = db.read_bytes()

    def cow_reset():
        s = img.session(True, limits)
        s.execute("UPDATE small SET w = 'q' WHERE k = 2")
        t0 = time.perf_counter()
        s.close()  # drops the written pages: the next session sees the image
        return time.perf_counter() - t0

    reset_ms = min(cow_reset() for _ in range(5)) * 1000
    copy_ms = timed(lambda: shutil.copyfile(db, db.with_suffix(".copy")))
    memcpy_ms = timed(lambda: bytearray(data))
    with img.session(True, limits) as s:
        s.execute("UPDATE small SET w = 'q' WHERE k = 2")
        digest_ms = timed(lambda: session_digest(s, cfg))
        key_ms = timed(lambda: session_state(s, cfg).key())
    ro = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    # the unavoidable full pass (a table's image digest, computed once per database content):
    # rows rendered in SQL, hashes summed vectorised, against the per-row Python loop it replaced
    full = cpu_and_wall(lambda: connection_digest(ro, cfg))
    legacy = cpu_and_wall(lambda: legacy_full_pass(ro, cfg))
    sort_ms = timed(lambda: sorted_state_hash(ro, cfg), repeats=1)
    db.with_suffix(".copy").unlink(missing_ok=True)
    return {
        "reset_ms": reset_ms,
        "file_copy_ms": copy_ms,
        "memcpy_ms": memcpy_ms,
        "reset_speedup_vs_copy": copy_ms / max(reset_ms, 1e-6),
        "digest_ms": digest_ms,
        "state_key_ms": key_ms,
        "full_pass_s": full,
        "legacy_full_pass_s": legacy,
        "sort_hash_ms": sort_ms,
        "digest_speedup_vs_sort_hash": sort_ms / max(digest_ms, 1e-6),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 100])
    ap.add_argument("--sessions", type=int, default=32)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--baseline",
        default=None,
        help="PYTHONPATH of another clarisql checkout: its cold first episode is measured too",
    )
    args = ap.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for mb in args.sizes:
            t0 = time.perf_counter()
            db = build(d, mb)
            tasks = d / f"tasks{mb}.jsonl"
            res: dict = {"db_mb": db.stat().st_size / 1e6, "build_s": time.perf_counter() - t0}
            cache = d / f"cache{mb}"
            if args.baseline:  # the same cold episode with another checkout, side by side
                res["cold_baseline"] = child(
                    tasks, d / f"base-cache{mb}", 1, pythonpath=args.baseline
                )
            res["cold"] = child(tasks, cache, 1)
            res["cold_big_table_write"] = child(tasks, d / f"cache-big{mb}", 1, episode=BIG_WRITE)
            res["warm_disk_cache"] = child(tasks, cache, 1)
            res["concurrent"] = child(tasks, cache, args.sessions)
            res["second_process"] = second_process(tasks, cache, args.sessions)
            res["ratios"] = ratios(db, tasks)
            out[f"{mb}MB"] = res
            print(json.dumps({f"{mb}MB": res}, indent=1), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
