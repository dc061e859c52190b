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
- ``surface-guess``: as ``text-guess``, the problem read off the value's look (a surface
  classifier): numbers another value; a word that looks misspelled (a letter pair rare in English
  text, an odd doubled letter) another value; anything else, a dictionary-looking word or name,
  the full name (a cut-off);
- ``words-guess``: as ``text-guess``, one word the full name (a cut-off), several words or a
  number another value;

and the honest references ``oracle`` and ``oracle-miss:0.1`` (misses one needed label in ten),
both through the label gate, and ``oracle-text``. Which labels ``oracle-miss:0.1`` misses is one
draw (seeded by task and label); on a suite with few underspecified tasks another draw moves
its score by a task's worth, so it is also played with :data:`DRAWS` draws and the guesses are
judged against their mean (``oracle-miss:0.1 mean``), the reference's expected score; the
verdict against the single draw is printed beside it. Label policies play against the label gate,
text policies against the text gate (lexical mapper).
The SQL each probe finally runs comes from the probes' ideal writer (the gold when the replies
told every hidden value, else the literal reading), so a probe's score is an upper bound. Every
episode is scored under every preset of ``configs/rewards``; it prints the mean reward per
policy and preset and whether every guess stays below ``oracle-miss:0.1``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gate_shotgun as gs  # noqa: E402

from clarisql.envs.env import ClarifySQLEnv  # noqa: E402
from clarisql.policies import make_policy  # noqa: E402
from clarisql.policies.probes import HonestMissPolicy, _AskThenWrite  # noqa: E402
from clarisql.rewards import EpisodeRecord, load_reward_spec, score_episode  # noqa: E402
from clarisql.rewards.spec import preset_dir  # noqa: E402
from clarisql.rollouts.episode import run_episode  # noqa: E402

#: draws of which labels ``oracle-miss:0.1`` misses, averaged into its expected score
DRAWS = 5
#: the guesses, each scored against ``oracle-miss:0.1``
GUESSES = ("label-guess", "text-guess", "text-kind-sweep", "surface-guess", "words-guess")

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


_BIGRAMS: dict[str, int] = {}
#: doubled letters English words have (a doubled letter elsewhere looks like a typo)
_DOUBLES = set("lseotfrnmpcdgbz")


def _bigrams() -> dict[str, int]:
    """Letter-pair counts of English prose (this package's own documentation): what a surface
    classifier knows without reading any database."""
    if not _BIGRAMS:
        root = Path(__file__).resolve().parent.parent
        for f in [*(root / "docs").glob("*.md"), root / "README.md"]:
            for w in re.findall(r"[a-z]+", f.read_text(encoding="utf-8").lower()):
                w = f"^{w}$"
                for a, b in zip(w, w[1:], strict=False):
                    _BIGRAMS[a + b] = _BIGRAMS.get(a + b, 0) + 1
    return _BIGRAMS


def looks_misspelled(value: str) -> bool:
    """A word of ``value`` has a letter pair rare in English prose, or an odd doubled letter."""
    counts = _bigrams()
    for w in re.findall(r"[a-z]+", value.lower()):
        if len(w) < 4:
            continue
        if any(a == b and a not in _DOUBLES for a, b in zip(w, w[1:], strict=False)):
            return True
        if min(counts.get(a + b, 0) for a, b in zip(f"^{w}", f"{w}$", strict=False)) < 3:
            return True
    return False


def classified_questions(request: str, schema: str, rule: str) -> list[str]:
    """``text-guess``'s turns with each named value's problem read off its surface by ``rule``
    (``surface``: misspelled-looking or a number is wrong, else cut off; ``words``: one word is
    cut off, several words or a number wrong)."""
    from clarisql.policies.text_questions import anchor

    t = SimpleNamespace(utterance=request)
    if gs.is_chinese(request):
        return gs.guess_questions(t, schema)
    out = [f"What exactly do you want to know about the {anchor(request)}?"]
    for v in gs.names(request)[:3]:
        if gs._is_number(v):
            wrong = True
        elif rule == "surface":
            wrong = looks_misspelled(v)
        else:
            wrong = len(v.split()) > 1
        out.append((gs.WRONG_Q if wrong else gs.PARTIAL_Q).format(v=gs._q(v)))
    out.append("Which year do you mean?")
    return out


class SurfaceGuess(_AskThenWrite):
    name = "surface-guess"
    rule = "surface"

    def asks(self, request: str, schema: str) -> list[Any]:
        qs = classified_questions(request, schema, self.rule)
        return [{"type": "clarify", "question": q, "labels": []} for q in qs]


class WordsGuess(SurfaceGuess):
    name = "words-guess"
    rule = "words"


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
        **{
            f"oracle-miss:0.1 draw {k}": ("labels", HonestMissPolicy(0.1, salt=f"{k}|"))
            for k in range(1, DRAWS)
        },
        "oracle-text": ("text", make_policy("oracle-text")),
        "label-guess": ("labels", LabelGuess()),
        "text-guess": ("text", TextGuess()),
        "text-kind-sweep": ("text", TextKindSweep()),
        "surface-guess": ("text", SurfaceGuess()),
        "words-guess": ("text", WordsGuess()),
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
    draws = [out.pop(f"oracle-miss:0.1 draw {k}") for k in range(1, DRAWS)]
    out["oracle-miss:0.1 mean"] = {
        p: round(sum(d[p] for d in [out["oracle-miss:0.1"], *draws]) / DRAWS, 3) for p in specs
    }
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
        for name in ("oracle-miss:0.1 mean", "oracle-miss:0.1"):
            ref = r[name]
            worse = [(g, p) for g in GUESSES for p in presets if r[g][p] >= ref[p]]
            print(f"every guess below {name} under every preset:", not worse, worse or "")
    print(json.dumps(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
