"""The report page on a large run: does a 10,000-episode page open and filter in under 2 s?

Synthesizes large runs from real ones: the built-in suite is run with the oracle and the naive
policy (or ``--runs`` gives run folders), and their episodes are replicated with new task ids and
trials, with outcomes and rewards perturbed, until ``--episodes`` are reached. Then, in headless
Chromium (Debian's package driven by Playwright, the same flags as the tests):

- ``build``: :func:`clarisql.rollouts.web.build_report` (Python: read, compact, inline), and the
  page's size;
- ``open``: from navigation to the page being ready (data parsed, overview and first list page
  drawn), as the browser's own clock reports it (``performance.now()``) and as the Python wall
  clock sees it (``page.goto`` to ready);
- ``filter``: category, then outcome, then a text search over task id, question and SQL (the
  first search builds the search index), each until the list is redrawn and laid out;
- ``open episode``: clicking a row until the episode view is drawn;
- ``compare`` (two runs of ``episodes / 2`` each): building the table of differing tasks.

Every step is repeated ``--repeat`` times in a fresh page and the best time kept. Prints a table
and writes JSON to ``benchmarks/out/``.

    python benchmarks/bench_web_report.py [--episodes 10000] [--repeat 3] [--runs RUN ...]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from clarisql.rollouts.runner import RunConfig, run_eval
from clarisql.rollouts.store import read_trajectories
from clarisql.rollouts.web import build_report
from clarisql.rollouts.web.browser import CHROMIUM_ARGS, chromium_path


def synthesize(lines: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` episode lines from ``lines``: replicated with new task ids, perturbed outcomes."""
    rng = random.Random(seed)
    out = []
    k = 0
    while len(out) < n:
        for x in lines:
            if len(out) >= n:
                break
            flip = rng.random() < 0.15
            ok = (not x["correct"]) if flip else x["correct"]
            out.append(
                {
                    **x,
                    "task_id": f"{x['task_id']}~{k}",
                    "correct": ok,
                    "reward": round(float(x["reward"]) + rng.uniform(-0.2, 0.2), 3),
                }
            )
        k += 1
    return out


def source_runs(args: argparse.Namespace, tmp: Path) -> list[Path]:
    if args.runs:
        return [Path(r) for r in args.runs]
    dirs = []
    for pol in ("oracle", "naive"):
        d = tmp / pol
        run_eval(RunConfig(suite="builtin", policy=pol), d, progress=False)
        dirs.append(d)
    return dirs


_FILTER_JS = """([id, value]) => {
  const t = performance.now();
  const el = document.getElementById(id);
  el.value = value;
  el.dispatchEvent(new Event("change"));
  void document.getElementById("rows").offsetHeight;  // force layout
  return performance.now() - t;
}"""

_SEARCH_JS = """(q) => {
  const t = performance.now();
  const el = document.getElementById("f-q");
  el.value = q;
  F.q = q; applyFilters();  // what the debounced input handler calls
  void document.getElementById("rows").offsetHeight;
  return performance.now() - t;
}"""


def measure(page: Any, html: Path, two_runs: bool) -> dict[str, float]:
    t0 = time.perf_counter()
    page.goto(html.as_uri())
    page.wait_for_selector("body[data-ready]", timeout=60_000)
    wall_open = (time.perf_counter() - t0) * 1000
    r: dict[str, float] = {
        "open_ms (browser clock)": float(page.get_attribute("body", "data-ready-ms")),
        "open_ms (wall)": wall_open,
    }
    page.click("button[data-tab=episodes]")
    r["filter category_ms"] = page.evaluate(_FILTER_JS, ["f-cat", "where"])
    r["filter outcome_ms"] = page.evaluate(_FILTER_JS, ["f-ok", "0"])
    t = time.perf_counter()
    page.select_option("#f-end", "stop")  # through Playwright, as a user would
    page.wait_for_selector("#rows tr")
    r["filter end_ms (wall)"] = (time.perf_counter() - t) * 1000
    r["search (first)_ms"] = page.evaluate(_SEARCH_JS, "riverton")
    r["search (again)_ms"] = page.evaluate(_SEARCH_JS, "select")
    t = time.perf_counter()
    page.locator("#rows tr[data-i]").first.click()
    page.wait_for_selector("#detail .ephead")
    r["open episode_ms (wall)"] = (time.perf_counter() - t) * 1000
    r["rows in DOM"] = page.locator("#rows tr").count()
    if two_runs:
        t = time.perf_counter()
        page.click("button[data-tab=compare]")
        page.wait_for_selector("#difftable")
        r["compare table_ms (wall)"] = (time.perf_counter() - t) * 1000
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", nargs="*", default=None, help="source run folders (default: run)")
    ap.add_argument("--chromium", default=chromium_path() or "/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="clarisql-bench-web-"))
    try:
        src = source_runs(args, tmp)
        base = [x for d in src for x in read_trajectories(d / "trajectories.jsonl")]
        cases = {}
        one = synthesize(base, args.episodes, seed=0)
        t = time.perf_counter()
        build_report([src[0]], tmp / "one.html", lines_by_run=[one])
        cases["1 run"] = (tmp / "one.html", time.perf_counter() - t, False)
        if len(src) >= 2:
            half = args.episodes // 2
            a = synthesize(read_trajectories(src[0] / "trajectories.jsonl"), half, seed=1)
            b = synthesize(read_trajectories(src[1] / "trajectories.jsonl"), half, seed=1)
            t = time.perf_counter()
            build_report(src[:2], tmp / "two.html", lines_by_run=[a, b])
            cases["2 runs"] = (tmp / "two.html", time.perf_counter() - t, True)
        results: dict[str, Any] = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS
            )
            for name, (html, build_s, two) in cases.items():
                best: dict[str, float] = {}
                for _ in range(args.repeat):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    for k, v in measure(page, html, two).items():
                        best[k] = min(best.get(k, v), v)
                    page.close()
                results[name] = {
                    "episodes": args.episodes,
                    "build_s": build_s,
                    "page_mb": html.stat().st_size / 1e6,
                    **best,
                }
            version = browser.version
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    keys = list(dict.fromkeys(k for r in results.values() for k in r))
    print(f"{'':26}" + "".join(f"{n:>12}" for n in results))
    for k in keys:
        print(f"{k:26}" + "".join(f"{results[n].get(k, float('nan')):>12.1f}" for n in results))
    out = Path(__file__).with_name("out")
    out.mkdir(exist_ok=True)
    meta = {"chromium": version, "python": sys.version.split()[0], "machine": platform.machine()}
    (out / "bench_web_report.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
