"""Rollout throughput: scripted-policy episodes per second, and the runner's overhead.

Side by side, on the same tasks:
- ``bare, first pass``: the plain loop below on cold caches (gold answers computed, database
  images loaded: what every fresh worker process pays once per task);
- ``bare``: a plain loop calling ``env.reset``/``policy.act``/``env.step`` (no trajectory, no file);
- ``run_episode``: the same through :func:`clarisql.rollouts.episode.run_episode` (builds the
  trajectory line, in memory);
- ``runner w=1``: :func:`clarisql.rollouts.runner.run_eval`, one process (streams the
  trajectory file, progress bar off, reports off);
- ``runner w=2``: two worker processes (their start-up and suite loading included); this
  process has run episodes already (an SQL watchdog thread is alive), so they are *spawned*;
- ``runner w=2, fresh process``: the same from a fresh single-threaded process (as ``clarisql
  eval --workers 2`` runs it), where the workers are *forked* with everything imported.

For the runner, start-up (time to the first finished episode: suite loading, process spawn) and
steady-state episodes per second (after the first episode) are reported too.

``clarisql eval`` (the command, in a fresh process) is measured twice, on ``--episodes`` tasks and
on one task; the difference divided by the extra episodes is its **per-episode** cost (cold caches
included: a fresh process computes every task's gold once), compared with the bare loop's first
(cold) pass and its warm passes; the one-task run is the command's fixed cost (imports, suite,
reports and plots). ``--profile`` runs the command under cProfile in this process and prints the
functions with the most cumulative time (where the per-episode overhead goes).
Every measurement is repeated (``--repeat``) after one unmeasured warm-up pass (gold answers and
database images cached in this process), and the best time is kept. Prints a table and writes
JSON to ``benchmarks/out/``.

    python benchmarks/bench_rollouts.py [--suite builtin] [--policy oracle] [--episodes 300] [--profile]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suites import load_suite
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.runner import RunConfig, run_eval


def bare_loop(env: ClarifySQLEnv, policy, task_ids: list[str]) -> int:
    steps = 0
    for i, tid in enumerate(task_ids):
        obs, info = env.reset(seed=i, options={"task_id": tid})
        policy.reset(obs, info, env.task if policy.privileged else None)
        done = False
        while not done:
            obs, _, term, trunc, info = env.step(policy.act(obs, info))
            steps += 1
            done = term or trunc
    return steps


def episode_loop(env: ClarifySQLEnv, policy, task_ids: list[str]) -> int:
    return sum(len(run_episode(env, policy, tid, seed=i).turns) for i, tid in enumerate(task_ids))


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def time_runner(
    args: argparse.Namespace, out: Path, workers: int, n: int
) -> tuple[float, float, float]:
    """(wall seconds, start-up seconds, steady-state episodes/s) of one runner pass."""
    marks: list[float] = []
    cfg = RunConfig(
        suite=args.suite, policy=args.policy, max_episodes=args.episodes, trials=args.trials
    )
    t0 = time.perf_counter()
    o = run_eval(
        cfg,
        out,
        workers=workers,
        progress=False,
        write_reports=False,
        on_result=lambda r: marks.append(time.perf_counter()),
    )
    wall = time.perf_counter() - t0
    assert o.complete and o.n_done == n, o
    # start-up (suite loading, process spawn) = time to the first finished episode
    steady = (n - 1) / (marks[-1] - marks[0]) if n > 1 and marks[-1] > marks[0] else float("nan")
    return wall, marks[0] - t0, steady


_FRESH_RUNNER = """
import json, sys, time
from clarisql.rollouts.runner import RunConfig, run_eval
a = json.loads(sys.argv[1])
marks = []
cfg = RunConfig(suite=a["suite"], policy=a["policy"], max_episodes=a["episodes"], trials=a["trials"])
t0 = time.perf_counter()
run_eval(cfg, a["out"], workers=a["workers"], progress=False, write_reports=False,
         on_result=lambda r: marks.append(time.perf_counter()))
print(json.dumps({"wall": time.perf_counter() - t0, "startup": marks[0] - t0}))
"""


def time_fresh_runner(args: argparse.Namespace, out: Path, workers: int) -> tuple[float, float]:
    """(wall, start-up) seconds of ``run_eval`` with ``workers`` processes, called from a fresh
    process (single-threaded: its workers are forked, as under ``clarisql eval``)."""
    spec = {
        "suite": args.suite,
        "policy": args.policy,
        "episodes": args.episodes,
        "trials": args.trials,
        "out": str(out),
        "workers": workers,
    }
    res = subprocess.run(
        [sys.executable, "-c", _FRESH_RUNNER, json.dumps(spec)],
        check=True,
        capture_output=True,
        text=True,
    )
    d = json.loads(res.stdout.strip().splitlines()[-1])
    return d["wall"], d["startup"]


def eval_command(args: argparse.Namespace, out: Path, n: int) -> list[str]:
    return [
        "eval",
        "--suite",
        args.suite,
        "--policy",
        args.policy,
        "--max-episodes",
        str(n),
        "--trials",
        str(args.trials),
        "--out",
        str(out),
        "--no-progress",
    ]


_FRESH_EVAL = """
import json, sys, time
t0 = time.perf_counter()
from clarisql.cli import main
from clarisql.rollouts import runner
t_import = time.perf_counter() - t0
spent = {"episodes_s": 0.0, "reports_s": 0.0}
def timed(fn, key):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key] += time.perf_counter() - t
    return wrapper
runner._run_on_engine = timed(runner._run_on_engine, "episodes_s")
runner._write_reports = timed(runner._write_reports, "reports_s")
main(json.loads(sys.argv[1]))
print(json.dumps({"import_s": t_import, "total_s": time.perf_counter() - t0, **spent}))
"""


def time_cli(args: argparse.Namespace, out: Path, n: int) -> dict[str, float]:
    """``clarisql eval`` on the first ``n`` tasks in a fresh process, its phases timed inside it
    (imports, the episodes phase of the runner, reports): a difference of two noisy wall times
    would hide a per-episode cost on a busy machine."""
    res = subprocess.run(
        [sys.executable, "-c", _FRESH_EVAL, json.dumps(eval_command(args, out, n))],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def profile_cli(args: argparse.Namespace, out: Path, top: int = 25) -> str:
    """cProfile of ``clarisql eval`` in a fresh process (cold caches, as a user runs it): the
    ``top`` clarisql/sqlglot/matplotlib functions by cumulative time."""
    prof = out.with_suffix(".prof")
    cmd = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "clarisql"]
    subprocess.run(
        [*cmd, *eval_command(args, out, args.episodes)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    buf = io.StringIO()
    stats = pstats.Stats(str(prof), stream=buf).sort_stats("cumulative")
    stats.print_stats(r"clarisql[/\\\\]|sqlglot[/\\\\]|matplotlib[/\\\\]", top)
    text = buf.getvalue()
    for prefix in sorted({str(Path(p).parent) for p in sys.path if p}, key=len, reverse=True):
        text = text.replace(prefix + os.sep, "")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--suite", default="builtin", help="builtin or a .jsonl task file (default builtin)"
    )
    ap.add_argument("--policy", default="oracle")
    ap.add_argument("--episodes", type=int, default=300, help="tasks per measurement")
    ap.add_argument("--trials", type=int, default=1, help="trials per task")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "out"))
    ap.add_argument(
        "--profile", action="store_true", help="also print a cProfile of `clarisql eval`"
    )
    args = ap.parse_args(argv)

    try:
        suite = load_suite(args.suite)
    except (ModuleNotFoundError, FileNotFoundError, KeyError, ValueError) as e:
        print(f"bench_rollouts: cannot load suite {args.suite!r}: {e}", file=sys.stderr)
        return 2
    task_ids = [t.id for t in suite.tasks[: args.episodes] for _ in range(args.trials)]
    n = len(task_ids)
    env = ClarifySQLEnv(suite)
    policy = make_policy(args.policy)
    t0 = time.perf_counter()
    steps = bare_loop(env, policy, task_ids)  # warm-up: images, gold answers, schema summaries
    cold = time.perf_counter() - t0
    results: dict[str, dict[str, float]] = {
        "bare loop, first pass (cold caches)": {"seconds": cold, "episodes_per_s": n / cold}
    }

    t = best_of(lambda: bare_loop(env, policy, task_ids), args.repeat)
    results["bare env.step loop"] = {"seconds": t, "episodes_per_s": n / t}
    t = best_of(lambda: episode_loop(env, policy, task_ids), args.repeat)
    results["run_episode loop"] = {"seconds": t, "episodes_per_s": n / t}

    tmp = Path(tempfile.mkdtemp(prefix="bench_rollouts_"))
    try:
        for workers in (1, 2):
            runs = [
                time_runner(args, tmp / f"w{workers}_{i}", workers, n) for i in range(args.repeat)
            ]
            results[f"runner workers={workers}"] = {
                "seconds": min(r[0] for r in runs),
                "episodes_per_s": n / min(r[0] for r in runs),
                "startup_s": min(r[1] for r in runs),
                "steady_episodes_per_s": max(r[2] for r in runs),
            }
        fresh = [time_fresh_runner(args, tmp / f"fresh{i}", 2) for i in range(args.repeat)]
        results["runner workers=2, fresh process"] = {
            "seconds": min(r[0] for r in fresh),
            "episodes_per_s": n / min(r[0] for r in fresh),
            "startup_s": min(r[1] for r in fresh),
            "steady_episodes_per_s": float("nan"),
        }
        runs = [time_cli(args, tmp / f"cli{i}", args.episodes) for i in range(args.repeat)]
        best = min(runs, key=lambda r: r["episodes_s"])
        results["clarisql eval (fresh process)"] = {
            "seconds": min(r["total_s"] for r in runs),
            "episodes_per_s": n / min(r["total_s"] for r in runs),
            "episodes_phase_s": best["episodes_s"],
            "per_episode_ms": 1000.0 * best["episodes_s"] / n,
            "reports_s": min(r["reports_s"] for r in runs),
            "import_s": min(r["import_s"] for r in runs),
        }
        profile = profile_cli(args, tmp / "profiled") if args.profile else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    env.close()

    bare = results["bare env.step loop"]["seconds"]
    for r in results.values():
        r["overhead_vs_bare_pct"] = 100.0 * (r["seconds"] - bare) / bare
    report = {
        "benchmark": "bench_rollouts",
        "suite": args.suite,
        "policy": args.policy,
        "episodes": n,
        "trials": args.trials,
        "steps_per_pass": steps,
        "repeat": args.repeat,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "results": results,
    }
    print(
        f"suite {args.suite}, policy {args.policy}, {n} episodes ({args.trials} trial(s) per task) ({steps} steps), best of {args.repeat}, "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'measurement':<38}{'seconds':>10}{'episodes/s':>13}{'vs bare':>10}{'start-up s':>12}{'steady ep/s':>13}"
    )
    for name, r in results.items():
        extra = (
            f"{r['startup_s']:>12.3f}{r['steady_episodes_per_s']:>13.1f}"
            if "startup_s" in r
            else ""
        )
        print(
            f"{name:<38}{r['seconds']:>10.3f}{r['episodes_per_s']:>13.1f}{r['overhead_vs_bare_pct']:>+9.1f}%{extra}"
        )
    cli = results["clarisql eval (fresh process)"]
    bare_ms = 1000.0 * bare / n
    cold_ms = 1000.0 * cold / n
    cli["per_episode_vs_bare"] = cli["per_episode_ms"] / bare_ms
    cli["per_episode_vs_bare_cold"] = cli["per_episode_ms"] / cold_ms
    print(
        f"clarisql eval, episodes phase: {cli['per_episode_ms']:.2f} ms per episode "
        f"({cli['per_episode_vs_bare_cold']:.2f}x the bare loop's first pass, {cold_ms:.2f} ms: "
        f"both on cold caches; {cli['per_episode_vs_bare']:.2f}x its warm {bare_ms:.2f} ms); "
        f"fixed: imports {cli['import_s']:.2f} s, reports and plots {cli['reports_s']:.2f} s"
    )
    if profile:
        print("\ncProfile of `clarisql eval` (cumulative time):")
        print(profile)
        report["profile_top"] = profile
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_rollouts_{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
