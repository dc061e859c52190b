"""Within-bounds guessing against the honest reference, under every reward preset.

    python benchmarks/gate_guess.py [SUITE ...] [--max-episodes N] [--data-odutqa DIR]

A guess the gate cannot refuse (it asks about no more than a task could need, one problem per
value) still earns what it guesses right; what makes it lose is the reward's charge for
unneeded clarification. This plays, on every task of each suite (underspecified or not, as an
agent meets them), policies that never read the gold to ask:

- ``label-guess``: one clarify with ``intent`` and three Missing slots (year, city, district);
- ``text-guess``: an anchored intent question, one question per named value with the problem its
  surface suggests (numbers: another value; names: the full name), then "Which year?";
- ``text-kind-sweep``: every named value asked as another value, then as a full name;

and the honest references ``oracle`` and ``oracle-miss:0.1`` (misses one needed label in ten),
both through the label gate, and ``oracle-text``. Label policies play against the label gate,
text policies against the text gate (lexical mapper).
The SQL each probe finally runs comes from the probes' ideal writer (the gold when the replies
told every hidden value, else the literal reading), so a probe's score is an upper bound. Every
episode is scored under every preset of ``configs/rewards``; it prints the mean reward per
policy and preset and whether every guess stays below ``oracle-miss:0.1``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gate_shotgun as gs  # noqa: E402

from clarisql.envs.env import ClarifySQLEnv  # noqa: E402
from clarisql.policies import make_policy  # noqa: E402
from clarisql.policies.probes import _AskThenWrite  # noqa: E402
from clarisql.rewards import EpisodeRecord, load_reward_spec, score_episode  # noqa: E402
from clarisql.rewards.spec import preset_dir  # noqa: E402
from clarisql.rollouts.episode import run_episode  # noqa: E402

LABEL_GUESS = [
    "intent",
    ["", "year", "Missing"],
    ["", "city", "Missing"],
    ["", "district", "Missing"],
]


class LabelGuess(_AskThenWrite):
    name = "label-guess"

    def asks(self, request: str, schema: str) -> list[Any]:
        return [{"type": "clarify", "question": "Could you clarify?", "labels": LABEL_GUESS}]


class TextGuess(_AskThenWrite):
    name = "text-guess"

    def asks(self, request: str, schema: str) -> list[Any]:
        qs = gs.guess_questions(SimpleNamespace(utterance=request), schema)
        return [{"type": "clarify", "question": q, "labels": []} for q in qs]


class TextKindSweep(_AskThenWrite):
    name = "text-kind-sweep"

    def asks(self, request: str, schema: str) -> list[Any]:
        t = SimpleNamespace(utterance=request)
        qs = [q for k in ("wrong", "partial") for q in gs.kind_questions(t, k)]
        return [{"type": "clarify", "question": q, "labels": []} for q in qs]


def run(suite: str, max_episodes: int | None, **kw: Any) -> dict[str, dict[str, float]]:
    envs = {
        g: ClarifySQLEnv(suite, suite_kwargs=kw, gate=g, gate_mapper="lexical", table_search=False)
        for g in ("labels", "text")
    }
    tasks = [t.id for t in envs["labels"].suite.tasks][:max_episodes]
    presets = sorted(p.stem for p in preset_dir().glob("*.yaml"))
    specs = {p: load_reward_spec(p) for p in presets}
    policies = {
        "oracle": ("labels", make_policy("oracle")),
        "oracle-miss:0.1": ("labels", make_policy("oracle-miss:0.1")),
        "oracle-text": ("text", make_policy("oracle-text")),
        "label-guess": ("labels", LabelGuess()),
        "text-guess": ("text", TextGuess()),
        "text-kind-sweep": ("text", TextKindSweep()),
    }
    out: dict[str, dict[str, float]] = {}
    for name, (gate, pol) in policies.items():
        recs = []
        for tid in tasks:
            res = run_episode(envs[gate], pol, tid, seed=0)
            if res.summary.get("record"):
                recs.append(EpisodeRecord.from_dict(res.summary["record"]))
        out[name] = {
            p: round(sum(score_episode(r, s)[0] for r in recs) / max(1, len(recs)), 3)
            for p, s in specs.items()
        }
    for env in envs.values():
        env.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suites", nargs="*", default=["builtin"])
    ap.add_argument("--max-episodes", type=int, default=None, metavar="N")
    ap.add_argument("--data-odutqa", default=None, metavar="DIR")
    a = ap.parse_args(argv)
    report = {}
    for s in a.suites:
        kw = {"data": a.data_odutqa} if s == "odutqa" and a.data_odutqa else {}
        r = report[s] = run(s, a.max_episodes, **kw)
        presets = list(next(iter(r.values())))
        print(f"\n{s}\n| policy | " + " | ".join(presets) + " |")
        print("|---" * (len(presets) + 1) + "|")
        for name, row in r.items():
            print(f"| {name} | " + " | ".join(f"{row[p]:.3f}" for p in presets) + " |")
        ref = r["oracle-miss:0.1"]
        worse = [
            (g, p)
            for g in ("label-guess", "text-guess", "text-kind-sweep")
            for p in presets
            if r[g][p] >= ref[p]
        ]
        print("every guess below oracle-miss:0.1 under every preset:", not worse, worse or "")
    print(json.dumps(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
