"""Built-in suite generation through the synthesis engine: the "~1 s, cached" contract.

Run: ``python benchmarks/bench_builtin.py [--seeds N] [--json OUT]``. For seeds 0..N-1, in one
process: the time to write the database alone (:func:`~clarisql.envs.suites.builtin.db.build_database`)
and the whole :func:`~clarisql.envs.suites.builtin.build_builtin` (database, drafting with the
domain's quotas, every draft checked in the sandbox, publishing ``tasks.jsonl`` and ``SUITE.md``),
wall-clock and process CPU time (the machine is shared; CPU time suffers less from contention),
and a cached :func:`~clarisql.envs.suites.builtin.builtin_suite` load. Also checks that building
the same seed twice gives a byte-identical ``tasks.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from clarisql.envs.suites.builtin import TASKS_FILE, build_builtin, builtin_suite
from clarisql.envs.suites.builtin.db import build_database


def _timed(fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for seed in range(args.seeds):
            db_w, db_c = _timed(
                lambda s=seed: build_database(base / f"db{s}.sqlite", random.Random(s))
            )
            all_w, all_c = _timed(lambda s=seed: build_builtin(base / f"a{s}", s))
            build_builtin(base / f"b{seed}", seed)
            same = (base / f"a{seed}" / TASKS_FILE).read_bytes() == (
                base / f"b{seed}" / TASKS_FILE
            ).read_bytes()
            builtin_suite(seed, cache_dir=base / "cache")
            load_w, load_c = _timed(lambda s=seed: builtin_suite(s, cache_dir=base / "cache"))
            rows.append(
                {
                    "seed": seed,
                    "database_wall_s": db_w,
                    "database_cpu_s": db_c,
                    "build_wall_s": all_w,
                    "build_cpu_s": all_c,
                    "cached_load_wall_s": load_w,
                    "cached_load_cpu_s": load_c,
                    "byte_identical": same,
                }
            )
    print(
        "| seed | database wall / CPU s | whole build wall / CPU s | cached load s | same bytes |"
    )
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['seed']} | {r['database_wall_s']:.2f} / {r['database_cpu_s']:.2f} | "
            f"{r['build_wall_s']:.2f} / {r['build_cpu_s']:.2f} | {r['cached_load_wall_s']:.3f} | "
            f"{r['byte_identical']} |"
        )
    med = statistics.median(r["build_wall_s"] for r in rows)
    print(f"median whole build {med:.2f} s wall")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
