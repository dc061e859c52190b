"""How well the ODUTQA suite resists shortcuts, and the scripted baselines on its paper metrics.

On the records in ``--data`` (default ``../shared/data/odutqa``, the 151 dev records):

- runnable records (gold SQL reproduces the record's answer on the full database) and the
  multi-table ones among them;
- the exploration probe (:func:`clarisql.envs.suites.odutqa.literal.exploration_probe`): on how
  many underspecified tasks the gold SQL without its WHERE, or with every vague part relaxed,
  or the literal reading, returns the gold answer (target 0);
- Pass@1 and ODUTQA-MDC's metrics (:mod:`clarisql.rollouts.odutqa_metrics`) of the oracle, the
  literal-reading naive baseline, abstain-all, clarify-every-turn and stop-at-once.

Prints a table and writes ``benchmarks/out/odutqa_integrity.json``. Run:
``python benchmarks/odutqa_integrity.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suites.odutqa import odutqa_suite
from clarisql.envs.suites.odutqa.literal import exploration_probe
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.metrics import compute_metrics

OUT = Path(__file__).resolve().parent / "out" / "odutqa_integrity.json"
POLICIES = ("oracle", "naive", "abstain-all", "clarify-every-turn", "stop-at-once")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="ODUTQA records folder")
    args = ap.parse_args()
    t0 = time.perf_counter()
    suite = odutqa_suite(args.data)
    n_records = suite.metadata["records"]
    multi = sum(len(t.metadata.get("tables") or []) > 1 for t in suite.tasks)
    probe = exploration_probe(suite)
    print(
        f"runnable: {len(suite)}/{n_records} records ({len(suite) / n_records:.1%}), "
        f"{multi} multi-table; skipped {suite.metadata['skipped']}"
    )
    under = probe["underspecified"]
    print(
        f"underspecified tasks: {under}; exploration solves {len(probe['exploration_solved'])} "
        f"({len(probe['exploration_solved']) / under:.1%}) {probe['exploration_solved']}; "
        f"the literal reading solves {len(probe['literal_solved'])} {probe['literal_solved']}"
    )
    env = ClarifySQLEnv(suite)
    rows = {}
    for name in POLICIES:
        lines = [run_episode(env, make_policy(name), t.id).to_dict() for t in suite.tasks]
        m = compute_metrics(lines)
        d = m["detection"]
        rows[name] = {
            "pass@1": m["pass@1"],
            "ecr": m["ecr"],
            "table_f1": m["table_f1"],
            **{f"acc_{c}": d[c]["accuracy"] for c in ("select", "from", "where")},
            **{f"f1_{c}": d[c]["f1"] for c in ("select", "from", "where")},
        }
    cols = list(next(iter(rows.values())))
    print("| policy | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, r in rows.items():
        cells = ["–" if r[c] is None else f"{r[c]:.3f}" for c in cols]
        print(f"| {name} | " + " | ".join(cells) + " |")
    OUT.parent.mkdir(exist_ok=True)
    report = {
        "records": n_records,
        "runnable": len(suite),
        "multi_table": multi,
        "probe": probe,
        "policies": rows,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    OUT.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({report['seconds']} s)")


if __name__ == "__main__":
    main()
