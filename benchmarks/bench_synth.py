"""Benchmark of `clarisql synth` (numbers in the README section "Synthesizing suites").

1. Suite: a ~60 MB (default ``--rows-scale 2``) folder of five generated CSV files (a
   customer/order join family, a product table, a two-year sales union family; messy values:
   'NA' and '' next to numbers) ->
   >= 1,000 verified tasks offline; wall time per stage and peak memory (RSS).
2. Discovery: a generated lake of >= 200 tables (families of same-schema tables, foreign keys
   into dimension tables, unrelated tables); exact containment vs MinHash LSH Ensemble, time,
   memory, and whether LSH found every pair the exact search found.

    nice python benchmarks/bench_synth.py [--rows-scale 2.0] [--tasks 1000] [--tables 240] [--out DIR]
                                          [--one-worker-too] [--csv DIR] [--workers N]

``--csv DIR`` reuses a folder generated before (``--out`` keeps it: ``DIR/suite-bench/csv``), so two
versions of the code can be timed side by side on the same files and under the same load; the
load average before and after each run is printed with the times (a shared machine's numbers
mean something only beside each other).

Verification runs on the machine's cores (``SynthConfig.workers``); ``--one-worker-too`` runs the
suite a second time on one thread, for the speed ratio and to show the output is identical.
With more than one worker the drafting and the unanswerable and write layers run in forked
processes where that is safe (docs/synth.md, "Speed: forked stages"): ``synth_cpu_s`` is this
process's CPU time and ``forked_cpu_s`` the children's.

Where the time goes (the clarify layer's name readings): each name column is read once into
an in-memory value index (``envs/synth/value_index.py``) that answers ``reach_sql`` exactly, and
edit distances run in C (``rapidfuzz``, ``cydifflib``); ``tasks.jsonl`` is byte-identical to the SQL path. Two
side-by-side pairs on the shared 2-core machine (load 2.5-4.5, 1,000 tasks): 126.6 s before vs
77.3 s after, 142.1 s vs 74.9 s, 173.2 s vs 84.9 s, and 139.4 s vs 69.0 s with the final code
(clarify 73-97 s -> 21-36 s); the quiet number is measured at merge
time (docs/synth.md, "Speed: the value index").

Run it `nice`d: the machine may be shared.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

from clarisql.envs.synth.discover import DiscoveryStats, find_joins, find_unions
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.tasks import load_tasks

REGIONS = ["North", "South", "East", "West", "Central"]
CITIES = [f"City {i:03d}" for i in range(150)]
SEGMENTS = ["Retail", "Business", "Public", "Education", "Health"]
CATEGORIES = ["Garden", "Kitchen", "Tools", "Toys", "Books", "Sports", "Office", "Music"]
WORDS = "amber bright cedar delta ember frost grove harbor iris juniper kestrel lumen".split()


def _write(path: Path, header: list[str], rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def _write_sales(folder: Path, rng: random.Random, n_sales: int) -> None:
    """The union family: one same-schema table per year."""
    for year in (2022, 2023):
        _write(
            folder / f"sales_{year}.csv",
            ["store", "city", "category", "revenue", "units", "week"],
            (
                [
                    f"Store {rng.randint(1, 400):03d}",
                    rng.choice(CITIES),
                    rng.choice(CATEGORIES),
                    "n/a" if i % 53 == 0 else f"{rng.uniform(50, 20000):.2f}",
                    rng.randint(1, 500),
                    rng.randint(1, 52),
                ]
                for i in range(n_sales)
            ),
        )


def make_csv_folder(folder: Path, scale: float = 1.0, seed: int = 0) -> int:
    """Five CSV files, ~30 MB at scale 1 (~60 MB at 2); returns the total size in bytes."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    n_cust, n_prod = int(60_000 * scale), int(20_000 * scale)
    n_orders, n_sales = int(260_000 * scale), int(110_000 * scale)

    def note() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))

    _write(
        folder / "customers.csv",
        ["customer_id", "name", "email", "city", "region", "segment", "joined", "note"],
        (
            [
                i,
                f"Customer {i:06d}",
                f"c{i}@example.org",
                rng.choice(CITIES),
                rng.choice(REGIONS),
                rng.choice(SEGMENTS),
                f"20{rng.randint(10, 23)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                note(),
            ]
            for i in range(1, n_cust + 1)
        ),
    )
    _write(
        folder / "products.csv",
        ["product_id", "product_name", "category", "list_price", "weight_kg"],
        (
            [
                i,
                f"Product {i:05d}",
                rng.choice(CATEGORIES),
                f"{rng.uniform(1, 900):.2f}",
                "NA" if i % 13 == 0 else f"{rng.uniform(0.1, 40):.1f}",
            ]
            for i in range(1, n_prod + 1)
        ),
    )
    _write(
        folder / "orders.csv",
        [
            "order_id",
            "customer_id",
            "product_id",
            "quantity",
            "amount",
            "order_date",
            "status",
            "channel",
        ],
        (
            [
                i,
                rng.randint(1, n_cust),
                rng.randint(1, n_prod),
                "NA" if i % 41 == 0 else rng.randint(1, 30),
                "" if i % 37 == 0 else f"{rng.uniform(2, 3000):.2f}",
                f"202{rng.randint(0, 3)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                rng.choice(("open", "shipped", "returned", "cancelled")),
                rng.choice(("web", "store", "phone")),
            ]
            for i in range(1, n_orders + 1)
        ),
    )
    _write_sales(folder, rng, n_sales)
    return sum(p.stat().st_size for p in folder.iterdir())


def make_lake(path: Path, n_tables: int, seed: int = 0) -> None:
    """A lake of ``n_tables`` tables: dimension tables, fact tables with keys into them, yearly
    families of same-schema tables, and unrelated tables with overlapping small integers."""
    import sqlite_utils

    rng = random.Random(seed)
    db = sqlite_utils.Database(path, recreate=True)
    n_dims = max(4, n_tables // 10)
    for d in range(n_dims):
        db[f"dim_{d:03d}"].insert_all(
            (
                {f"dim{d}_key": f"K{d}-{i}", "label": f"label {d}-{i}", "size": rng.randint(1, 99)}
                for i in range(300)
            ),
        )
    made = n_dims
    while made < n_tables:
        kind = made % 3
        if kind == 0:  # a fact table with a key into a dimension table
            d = rng.randrange(n_dims)
            db[f"fact_{made:03d}"].insert_all(
                (
                    {
                        f"dim{d}_key": f"K{d}-{rng.randrange(300)}",
                        "amount": round(rng.uniform(1, 999), 2),
                        "n": rng.randint(1, 9),
                    }
                    for _ in range(500)
                ),
            )
            made += 1
        elif kind == 1:  # a family of yearly tables with one schema
            fam = made
            for y in range(2):
                db[f"family_{fam:03d}_{2020 + y}"].insert_all(
                    (
                        {
                            "place": f"P{rng.randrange(60)}",
                            "kind": rng.choice(CATEGORIES),
                            f"metric_{fam}": rng.randint(1, 999),
                        }
                        for _ in range(200)
                    ),
                )
                made += 1
        else:  # unrelated
            db[f"misc_{made:03d}"].insert_all(
                (
                    {f"code_{made}": f"X{made}-{i}", f"value_{made}": rng.random()}
                    for i in range(400)
                ),
            )
            made += 1
    db.close()


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the forked drafting and layers)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_suite(
    work: Path,
    scale: float,
    tasks: int,
    one_worker_too: bool = False,
    csv_folder: Path | None = None,
    workers: int | None = None,
) -> dict:
    folder = csv_folder or work / "csv"
    t = time.perf_counter()
    if csv_folder is None:
        size = make_csv_folder(folder, scale)
    else:
        size = sum(p.stat().st_size for p in folder.iterdir())
    gen_s = time.perf_counter() - t
    load_before = round(os.getloadavg()[0], 2)
    t, c, kids = time.perf_counter(), time.process_time(), _children_cpu()
    res = synthesize(
        SynthConfig(sources=[folder], out=work / "suite", tasks=tasks, seed=0, workers=workers)
    )
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    kids = _children_cpu() - kids
    loaded = load_tasks(res.tasks_path)
    one: dict = {}
    if one_worker_too:  # the same suite with verification on one thread, for the ratio
        t, c = time.perf_counter(), time.process_time()
        cfg = SynthConfig(sources=[folder], out=work / "suite-1", tasks=tasks, seed=0, workers=1)
        res1 = synthesize(cfg)
        one = {
            "synth_wall_s": round(time.perf_counter() - t, 2),
            "synth_cpu_s": round(time.process_time() - c, 2),
            "load_average_1min": round(os.getloadavg()[0], 2),
            "tasks_jsonl_identical": res1.tasks_path.read_bytes() == res.tasks_path.read_bytes(),
        }
    return {
        "csv_mb": round(size / 1e6, 1),
        "generate_csv_s": round(gen_s, 2),
        "tasks": len(loaded),
        "synth_wall_s": round(wall, 2),
        "synth_cpu_s": round(cpu, 2),
        "forked_cpu_s": round(kids, 2),
        "cores": os.cpu_count(),
        "load_average_1min_before": load_before,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "stages_s": {k: round(v, 2) for k, v in res.timings.items()},
        "made": res.made,
        "shortfalls": res.shortfalls,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        **({"one_worker": one} if one else {}),
    }


def bench_discovery(work: Path, n_tables: int) -> dict:
    path = work / "lake.sqlite"
    make_lake(path, n_tables)
    t = time.perf_counter()
    lake = profile_lake(path)
    profile_s = time.perf_counter() - t
    out: dict = {"tables": len(lake.tables), "profile_s": round(profile_s, 2)}
    found = {}
    for name, limit in (("exact", 10**9), ("lsh-ensemble", 0)):
        stats = DiscoveryStats()
        rss0 = peak_rss_mb()
        t = time.perf_counter()
        joins = find_joins(lake, exact_limit=limit, stats=stats)
        unions = find_unions(lake)
        secs = time.perf_counter() - t
        found[name] = {(j.left, j.right) for j in joins}
        out[name] = {
            "seconds": round(secs, 2),
            "candidate_columns": stats.columns,
            "candidate_pairs_checked": stats.candidates,
            "joins": len(joins),
            "unions": len(unions),
            "peak_rss_mb": round(max(rss0, peak_rss_mb()), 1),
        }
    out["lsh_recall_vs_exact"] = round(
        len(found["exact"] & found["lsh-ensemble"]) / max(1, len(found["exact"])), 3
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows-scale", type=float, default=2.0)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--tables", type=int, default=240)
    ap.add_argument("--only", choices=("suite", "discovery"), default=None)
    ap.add_argument(
        "--one-worker-too",
        action="store_true",
        help="synthesize the suite again with --workers 1 (speed ratio; identical output)",
    )
    ap.add_argument("--out", default=None, help="keep the generated files here")
    ap.add_argument("--csv", default=None, help="reuse this generated CSV folder")
    ap.add_argument("--workers", type=int, default=None, help="verification threads")
    args = ap.parse_args()
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-synth-"))
    work.mkdir(parents=True, exist_ok=True)
    result = {}
    try:
        if args.only in (None, "suite"):
            result["suite"] = bench_suite(
                work / "suite-bench",
                args.rows_scale,
                args.tasks,
                args.one_worker_too,
                Path(args.csv) if args.csv else None,
                args.workers,
            )
        if args.only in (None, "discovery"):
            result["discovery"] = bench_discovery(work, args.tables)
    finally:
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
