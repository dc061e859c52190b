"""The ablation matrix: every probe and the strategy search against the honest reference, under
every reward preset, on several suites, as one table.

    python benchmarks/ablation_matrix.py --out DIR [SUITE ...] [--search-tasks N] ...

SUITE is ``builtin``, ``dysql``, ``odutqa``, a tasks.jsonl file (a synthesized or imported suite)
or a ``.sqlite`` database, which is first synthesized into ``DIR/synth/<name>`` (300 tasks, seed
0, the hashing embedder: ``clarisql synth DB --out ... --tasks 300 --seed 0``). Default: builtin,
dysql, odutqa and the DySQL-Bench chinook and Pagila databases (``--shared``, default
``../shared/data``, holds the DySQL-Bench and ODUTQA-MDC data).

For each suite it runs ``clarisql ablate --suite SUITE --policies oracle (replay on DySQL)
--search`` into ``DIR/<name>`` (every integrity probe, both honest agents that miss, every
preset; see docs/ablation.md) and collects each ``verdict.json`` into ``DIR/matrix.md`` and
``DIR/matrix.json``: per suite and preset, the honest reference, the best-scoring probe, the
best strategy the search found, and how many cells are below / tie / above / n/a. A suite's
runs are reused when its folder exists (``clarisql ablate`` resumes), so re-running after a
crash only plays what is missing; ``--fresh`` starts over.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _synth(db: Path, out: Path, tasks: int, seed: int) -> Path:
    from clarisql.cli import main as cli_main

    tf = out / "tasks.jsonl"
    if not tf.is_file():
        os.environ.setdefault("CLARISQL_SYNTH_EMBEDDER", "hashing")
        argv = ["synth", str(db), "--out", str(out), "--tasks", str(tasks), "--seed", str(seed)]
        if cli_main(argv) != 0:
            raise SystemExit(f"synthesis of {db} failed")
    return tf


def _suite_args(
    suite: str, shared: Path, out: Path, args: argparse.Namespace
) -> tuple[str, list[str]]:
    """``(name, ablate arguments)`` for one SUITE item."""
    if suite == "builtin":
        return "builtin", ["--suite", "builtin", "--policies", "oracle"]
    if suite == "dysql":
        return "dysql", [
            "--suite",
            "dysql",
            "--data",
            str(shared / "dysql"),
            "--policies",
            "replay",
        ]
    if suite == "odutqa":
        return "odutqa", [
            "--suite",
            "odutqa",
            "--data",
            str(shared / "odutqa"),
            "--policies",
            "oracle",
        ]
    p = Path(suite)
    if p.suffix in (".sqlite", ".db", ".sqlite3"):
        name = p.stem.lower()
        tf = _synth(p, out / "synth" / name, args.synth_tasks, args.seed)
        return name, ["--suite", str(tf), "--policies", "oracle"]
    if p.suffix == ".jsonl" and p.is_file():
        name = p.parent.name if p.name == "tasks.jsonl" else p.stem
        return name, ["--suite", str(p), "--policies", "oracle"]
    raise SystemExit(f"unknown suite {suite!r}: builtin, dysql, odutqa, a tasks.jsonl or a .sqlite")


def _summary(name: str, v: dict[str, Any]) -> list[list[str]]:
    rows = []
    for s in v["specs"]:
        ref_name, ref = v["reference"][s]
        probes = [
            (r["probe"], r["cells"][s])
            for r in v["rows"]
            if not r["probe"].startswith("search") and r["cells"][s]["score"] is not None
        ]
        best = max(probes, key=lambda t: t[1]["score"]) if probes else None
        search = next((r["cells"][s] for r in v["rows"] if r["probe"].startswith("search")), None)
        verdicts = [c["verdict"] for _, c in probes] + ([search["verdict"]] if search else [])
        counts = {k: verdicts.count(k) for k in ("below", "tie", "above", "n/a")}
        word = "all below" if counts["below"] == len(verdicts) and verdicts else "**NOT all below**"
        rows.append(
            [
                name,
                s,
                f"{ref_name} {ref:.3f}",
                f"{best[0]} {best[1]['score']:.3f} ({best[1]['verdict']})" if best else "–",
                (
                    f"{search['score']:.3f} vs {search['reference'][1]:.3f} ({search['verdict']}): "
                    f"{search.get('strategy') or ''}"
                )
                if search and search.get("reference")
                else "–",
                ", ".join(f"{n} {k}" for k, n in counts.items() if n) + f": {word}",
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "suites", nargs="*", metavar="SUITE", help="builtin, dysql, odutqa, tasks.jsonl or .sqlite"
    )
    ap.add_argument("--out", required=True, metavar="DIR", help="output folder")
    ap.add_argument(
        "--shared",
        default=str(ROOT / ".." / "shared" / "data"),
        metavar="DIR",
        help="folder with the dysql/ and odutqa/ data (default ../shared/data)",
    )
    ap.add_argument(
        "--search-tasks", type=int, default=60, metavar="N", help="tasks the search plays on (60)"
    )
    ap.add_argument(
        "--search-population",
        type=int,
        default=12,
        metavar="N",
        help="strategies per iteration (12)",
    )
    ap.add_argument(
        "--search-iterations", type=int, default=4, metavar="N", help="CEM iterations per spec (4)"
    )
    ap.add_argument(
        "--synth-tasks",
        type=int,
        default=300,
        metavar="N",
        help="tasks per synthesized suite (300)",
    )
    ap.add_argument(
        "--seed", type=int, default=0, metavar="N", help="seed of the synthesis and the search (0)"
    )
    ap.add_argument(
        "--fresh", action="store_true", help="delete each suite's earlier ablation first"
    )
    args = ap.parse_args(argv)
    from clarisql.cli import main as cli_main

    shared = Path(args.shared)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dysql_dbs = shared / "dysql" / "DySQL-Bench" / "dysql_bench" / "envs"
    suites = args.suites or [
        "builtin",
        "dysql",
        "odutqa",
        str(dysql_dbs / "chinook" / "data" / "chinook.sqlite"),
        str(dysql_dbs / "pagila" / "data" / "Pagila.sqlite"),
    ]
    table: list[list[str]] = []
    collected: dict[str, Any] = {}
    status = 0
    for suite in suites:
        name, extra = _suite_args(suite, shared, out, args)
        d = out / name
        if args.fresh and d.exists():
            shutil.rmtree(d)
        argv_ = ["ablate", *extra, "--out", str(d), "--no-progress", "--seed", str(args.seed)]
        argv_ += ["--search", "--search-tasks", str(args.search_tasks)]
        argv_ += ["--search-population", str(args.search_population)]
        argv_ += ["--search-iterations", str(args.search_iterations)]
        print(f"=== {name}: clarisql {' '.join(argv_)}", flush=True)
        rc = cli_main(argv_)
        status |= rc
        vf = d / "verdict.json"
        if not vf.is_file():
            print(f"{name}: no verdict written (ablate exit {rc})", file=sys.stderr)
            status = 1
            continue
        v = json.loads(vf.read_text(encoding="utf-8"))
        collected[name] = v
        table += _summary(name, v)
    head = [
        "suite",
        "spec",
        "honest reference",
        "best probe",
        "search: best vs reference",
        "verdict",
    ]
    md = [
        "# Ablation matrix",
        "",
        "Every probe and the best strategy the search found, against the honest reference (the "
        "weaker of the oracle and the better of `oracle-miss:0.1` / `oracle-miss:0.1:abstain`), "
        "under every preset. Per-suite tables: `<suite>/verdict.md`.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in table),
        "",
    ]
    ok = all(v["ok"] for v in collected.values()) and len(collected) == len(suites)
    md.append(
        "**Every probe and the search stay below on every suite.**" if ok else "**Not all below.**"
    )
    (out / "matrix.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "matrix.json").write_text(json.dumps(collected, indent=2), encoding="utf-8")
    print("\n".join(md))
    print(f"wrote {out / 'matrix.md'}, {out / 'matrix.json'}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
