"""Does the wording give the category away? A cheat that reads the utterance alone.

TF-IDF (word 1-grams; word 1-2 grams) + logistic-regression classifiers are trained on one suite's utterances and
tested on another suite's (another database, or the built-in suite of another seed), for:

- ``unanswerable``: answerable reads (well-specified) vs column-related / column-surface
  unanswerable requests (TrustSQL's kinds that the *schema* decides);
- ``value``: well-specified reads vs reads whose only unclear parts are values the *data*
  decides: WHERE ``not-exist``, FROM ``Error`` and ``Unmatch``;
- ``non-sql`` and ``out-of-domain`` vs well-specified (reported, not bounded: their wording is
  what makes them what they are).

Each comparison is scored twice on the test suite, as balanced accuracy (the mean of the two
classes' recalls, so 0.5 is chance whatever the class sizes; the better of the two classifiers):

- ``pairs`` (the bounded number): minimal pairs, every positive task with its nearest answerable
  look-alike (the well-specified task whose utterance shares the most words with it, at least
  :data:`MIN_PAIR_SIMILARITY` of them; each task in one pair at most, a side's surplus left out),
  the classifier trained on the training suite's pairs. ``n pairs`` says how many were found. Where the suite is written as minimal
  pairs the look-alike is the twin; where it is not, it is the closest phrasing the suite has.
  If even look-alikes are told apart, the words decide.
- ``all``: every positive task against every well-specified task (a template that only answerable
  questions use is told apart here without being a leak: the agent must still look at the schema
  for the shared ones).

Two cheats a bag of words cannot be: ``surface`` (per comparison, on the pairs and on every task)
is a depth-4 decision tree on surface features (how many quoted values, the words of the shortest
and the longest, the utterance's length in words and characters, digits, a year, a vagueness word
such as "particular", a question mark, "every/each"), with ``one-word rule`` beside it (no
training: "a quoted value of one word is unclear", on the test pairs); and a regex baseline picks the action
(answer / clarify / abstain) from a dozen surface cues (quotes, digits, "one particular", "key
figure", "chart", "poem", ...) with a depth-4 decision tree. Both are reported, not bounded.

Usage (run it ``nice``d: the machine may be shared)::

    python benchmarks/wording_probe.py --builtin                  # seeds 1+2 -> seed 0
    python benchmarks/wording_probe.py --builtin --train-seeds 3,4 --test-seed 5
    python benchmarks/wording_probe.py --suite A/tasks.jsonl --suite B/tasks.jsonl   # A->B, B->A
    python benchmarks/wording_probe.py --builtin --json out.json

Exit status 0; with ``--bound 0.65`` it is 1 when a bounded (``pairs``) number is above the bound.
Needs scikit-learn (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clarisql.envs.tasks import Task, load_tasks

#: Value-level unclear parts: the database, not the words, decides whether a value exists.
VALUE_KINDS = frozenset({"not-exist", "Error", "Unmatch"})

BOUNDED = ("unanswerable", "value")
REPORTED = ("non-sql", "out-of-domain")


def is_answerable_read(t: Task) -> bool:
    return t.category == "well-specified" and t.answerable and not t.underspecs


def selectors() -> dict[str, Callable[[Task], bool]]:
    """The positive class of each comparison (the negative class is :func:`is_answerable_read`)."""

    def value(t: Task) -> bool:
        kinds = {u.label.kind for u in t.underspecs}
        return (not t.writable) and bool(kinds) and kinds <= VALUE_KINDS

    return {
        "unanswerable": lambda t: t.unanswerable_kind in ("column-related", "column-surface"),
        "value": value,
        "non-sql": lambda t: t.unanswerable_kind == "non-sql",
        "out-of-domain": lambda t: t.unanswerable_kind == "out-of-domain",
    }


_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


#: A pair is a minimal pair only if the two utterances share at least this share of their words
#: (Jaccard): one template, a few words apart. Pairs of different templates say nothing about
#: whether the words that *differ between twins* give the category away.
MIN_PAIR_SIMILARITY = 0.3


def look_alikes(
    pos: Sequence[str], neg: Sequence[str], min_similarity: float = MIN_PAIR_SIMILARITY
) -> list[tuple[str, str]]:
    """Minimal pairs: each positive utterance with its most similar negative one (Jaccard of word
    sets, at least ``min_similarity``), greedily, most similar pairs first (ties by index), each
    utterance in one pair at most; a side's surplus is left unpaired."""
    pw, nw = [_words(p) for p in pos], [_words(n) for n in neg]
    pairs = []
    for i, a in enumerate(pw):
        for j, b in enumerate(nw):
            pairs.append((-len(a & b) / max(1, len(a | b)), i, j))
    pairs.sort()
    took_p: set[int] = set()
    took_n: set[int] = set()
    out: list[tuple[str, str]] = []
    for neg_sim, i, j in pairs:
        if -neg_sim < min_similarity:
            break
        if i in took_p or j in took_n:
            continue
        took_p.add(i)
        took_n.add(j)
        out.append((pos[i], neg[j]))
    return out


def classifiers() -> dict[str, Callable[[], Any]]:
    """The cheats tried (factories); each comparison reports the best of them (word unigrams
    resist the noise of random bigrams, bigrams catch phrase-level cues)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    def make(n: int) -> Callable[[], Any]:
        return lambda: make_pipeline(
            TfidfVectorizer(ngram_range=(1, n), lowercase=True, sublinear_tf=True),
            LogisticRegression(max_iter=2000, class_weight="balanced", C=10.0),
        )

    return {f"tfidf{n}-lr": make(n) for n in (1, 2)}


def balanced_accuracy(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    from sklearn.metrics import balanced_accuracy_score

    return float(balanced_accuracy_score(y_true, y_pred))


def probe_texts(
    train_pos: Sequence[str],
    train_neg: Sequence[str],
    test_pos: Sequence[str],
    test_neg: Sequence[str],
) -> dict[str, float | int | None]:
    """Train on one side, score on the other: balanced accuracy on ``all`` and on ``pairs``."""
    out: dict[str, float | int | None] = {
        "train_pos": len(train_pos),
        "train_neg": len(train_neg),
        "test_pos": len(test_pos),
        "test_neg": len(test_neg),
        "pairs_n": 0,
        "all": None,
        "pairs": None,
    }
    if not train_pos or not train_neg or not test_pos or not test_neg:
        return out
    if not look_alikes(train_pos, train_neg) or not look_alikes(test_pos, test_neg):
        return _all_only(out, train_pos, train_neg, test_pos, test_neg)
    y_all = [1] * len(test_pos) + [0] * len(test_neg)
    twins = look_alikes(test_pos, test_neg)
    test_pairs = [p for p, _ in twins] + [n for _, n in twins]
    y_pairs = [1] * len(twins) + [0] * len(twins)
    train_twins = look_alikes(train_pos, train_neg)
    train_pairs = [p for p, _ in train_twins] + [n for _, n in train_twins]
    out["pairs_n"] = len(twins)
    for name, make in classifiers().items():
        clf = make()  # trained on everything, scored on everything
        clf.fit([*train_pos, *train_neg], [1] * len(train_pos) + [0] * len(train_neg))
        a = round(balanced_accuracy(y_all, list(clf.predict([*test_pos, *test_neg]))), 3)
        clf = make()  # trained on the look-alike pairs, scored on the look-alike pairs
        clf.fit(train_pairs, [1] * len(train_twins) + [0] * len(train_twins))
        p = round(balanced_accuracy(y_pairs, list(clf.predict(test_pairs))), 3)
        if out["pairs"] is None or p > out["pairs"]:  # type: ignore[operator]
            out["pairs"], out["classifier"] = p, name
        out["all"] = a if out["all"] is None else max(a, out["all"])  # type: ignore[type-var]
    return out


def _all_only(out: dict, train_pos, train_neg, test_pos, test_neg) -> dict:
    """No minimal pair on one side: only the ``all`` number."""
    y_all = [1] * len(test_pos) + [0] * len(test_neg)
    for make in classifiers().values():
        clf = make()
        clf.fit([*train_pos, *train_neg], [1] * len(train_pos) + [0] * len(train_neg))
        a = round(balanced_accuracy(y_all, list(clf.predict([*test_pos, *test_neg]))), 3)
        out["all"] = a if out["all"] is None else max(a, out["all"])
    return out


# ------------------------------------------------------------------------------------------------
# the surface cheat: what a bag of words cannot see (quote counts, quoted lengths, word counts)
# ------------------------------------------------------------------------------------------------
_QUOTED = re.compile(r'"([^"]*)"|\'([^\']*)\'')
SURFACE_WORDS = re.compile(
    r"\b(particular|specific|certain|kind of|sort of|one of|I'm looking|I mean|working on)\b", re.I
)


def surface_features(text: str) -> list[float]:
    """Surface cues of one utterance: how many quoted values, the words of the shortest and the
    longest, the utterance's words and characters, digits, a 4-digit year, a vagueness word, a
    question mark, "every/each"."""
    quoted = [a or b for a, b in _QUOTED.findall(text)]
    lens = [len(q.split()) for q in quoted] or [0]
    return [
        float(len(quoted)),
        float(min(lens)),
        float(max(lens)),
        float(len(text.split())),
        float(len(text)),
        float(bool(re.search(r"\d", text))),
        float(bool(re.search(r"\b(1[89]|20)\d\d\b", text))),
        float(bool(SURFACE_WORDS.search(text))),
        float(text.rstrip().endswith("?")),
        float(bool(re.search(r"\b(every|each)\b", text, re.I))),
    ]


def surface_cheat(
    train_pos: Sequence[str],
    train_neg: Sequence[str],
    test_pos: Sequence[str],
    test_neg: Sequence[str],
) -> dict[str, float | None]:
    """A depth-4 decision tree on :func:`surface_features`, trained on one suite and scored on
    the other (balanced accuracy), on the minimal pairs and on every task."""
    from sklearn.tree import DecisionTreeClassifier

    out: dict[str, float | None] = {"pairs": None, "all": None, "one-word-rule": None}
    if not (train_pos and train_neg and test_pos and test_neg):
        return out

    def score(tp: Sequence[str], tn: Sequence[str], sp: Sequence[str], sn: Sequence[str]) -> float:
        tree = DecisionTreeClassifier(max_depth=4, class_weight="balanced", random_state=0)
        tree.fit([surface_features(x) for x in [*tp, *tn]], [1] * len(tp) + [0] * len(tn))
        pred = tree.predict([surface_features(x) for x in [*sp, *sn]])
        return round(balanced_accuracy([1] * len(sp) + [0] * len(sn), list(pred)), 3)

    out["all"] = score(train_pos, train_neg, test_pos, test_neg)
    tr, te = look_alikes(train_pos, train_neg), look_alikes(test_pos, test_neg)
    if te:  # a fixed rule, no training: a quoted value of one word is an unclear one
        one = [int(surface_features(x)[1] == 1) for p, n in te for x in (p, n)]
        out["one-word-rule"] = round(balanced_accuracy([1, 0] * len(te), one), 3)
    if tr and te:
        out["pairs"] = score(
            [p for p, _ in tr], [n for _, n in tr], [p for p, _ in te], [n for _, n in te]
        )
    return out


def probe_suites(train: Sequence[Task], test: Sequence[Task]) -> dict[str, dict]:
    """Every comparison of :func:`selectors`, trained on ``train`` and scored on ``test``."""
    res: dict[str, dict] = {}
    tr_neg = [t.utterance for t in train if is_answerable_read(t)]
    te_neg = [t.utterance for t in test if is_answerable_read(t)]
    for name, sel in selectors().items():
        tr_pos = [t.utterance for t in train if sel(t)]
        te_pos = [t.utterance for t in test if sel(t)]
        res[name] = probe_texts(tr_pos, tr_neg, te_pos, te_neg)
        res[name]["surface"] = surface_cheat(tr_pos, tr_neg, te_pos, te_neg)
    res["regex-action"] = regex_action(train, test)
    return res


# ------------------------------------------------------------------------------------------------
# the regex baseline
# ------------------------------------------------------------------------------------------------
CUES: tuple[tuple[str, str], ...] = (
    ("quote", r"['\"‘’“”]"),
    ("digits", r"\d"),
    ("year", r"\b(19|20)\d\d\b"),
    ("one-of", r"\b(one (particular|specific|of)|a district|I'm looking|I mean one|working on)\b"),
    ("vague", r"\b(key figure|main number|in numbers|numbers say|quick figure)\b"),
    ("non-sql", r"\b(chart|plot|graph|forecast|predict|visuali[sz]e|model|draw|trend)\b"),
    ("ood", r"\b(poem|joke|translate|weather|email|recipe|explain|summari[sz]e|tips?)\b"),
    ("legal", r"\b(Co\.|Ltd|Inc|Group|Company)\b"),
    ("question", r"\?\s*$"),
    ("imperative", r"^(List|Show|Give|Tell|Count|Find|Write|Draft|Suggest)\b"),
    ("how-many", r"^How many\b"),
    ("long", r"^.{120,}$"),
)


def action(t: Task) -> str | None:
    if t.writable:
        return None
    if not t.answerable:
        return "abstain"
    return "clarify" if t.underspecs else "answer"


def cue_vector(text: str) -> list[int]:
    return [1 if re.search(rx, text, re.IGNORECASE if n != "legal" else 0) else 0 for n, rx in CUES]


def regex_action(train: Sequence[Task], test: Sequence[Task]) -> dict[str, float | None]:
    from sklearn.tree import DecisionTreeClassifier

    tr = [(cue_vector(t.utterance), a) for t in train if (a := action(t))]
    te = [(cue_vector(t.utterance), a) for t in test if (a := action(t))]
    if len({a for _, a in tr}) < 2 or not te:
        return {"balanced_accuracy": None}
    tree = DecisionTreeClassifier(max_depth=4, class_weight="balanced", random_state=0)
    tree.fit([x for x, _ in tr], [a for _, a in tr])
    pred = tree.predict([x for x, _ in te])
    return {"balanced_accuracy": round(balanced_accuracy([a for _, a in te], list(pred)), 3)}


# ------------------------------------------------------------------------------------------------
# suites
# ------------------------------------------------------------------------------------------------
def builtin_tasks(seed: int, cache: Path) -> list[Task]:
    from clarisql.envs.suites.builtin import builtin_suite

    return list(builtin_suite(seed=seed, cache_dir=cache).tasks)


def suite_tasks(path: str) -> list[Task]:
    p = Path(path)
    return load_tasks(p / "tasks.jsonl" if p.is_dir() else p)


def run(
    builtin: bool,
    suites: Sequence[str],
    cache: Path | None = None,
    train_seeds: Sequence[int] = (1, 2),
    test_seed: int = 0,
) -> dict[str, dict[str, dict]]:
    """{split name: probe_suites result}."""
    out: dict[str, dict[str, dict]] = {}
    if builtin:
        with tempfile.TemporaryDirectory() as tmp:
            c = cache or Path(tmp)
            train = [t for seed in train_seeds for t in builtin_tasks(seed, c)]
            test = builtin_tasks(test_seed, c)
            name = f"builtin seeds {'+'.join(map(str, train_seeds))} -> {test_seed}"
            out[name] = probe_suites(train, test)
    loaded = {s: suite_tasks(s) for s in suites}
    for a in suites:
        for b in suites:
            if a != b:
                out[f"{a} -> {b}"] = probe_suites(loaded[a], loaded[b])
    return out


def spread_of(acc: float | None, pairs: int | None) -> str:
    """Two standard errors of a balanced accuracy on ``pairs`` test pairs (2 x pairs
    utterances, binomial): how far another synthesis of the same databases may move it
    (30 pairs: about ±0.13 at 0.6)."""
    if acc is None or not pairs:
        return ""
    return f"{2 * (acc * (1 - acc) / (2 * pairs)) ** 0.5:.3f}"


def table(results: dict[str, dict[str, dict]]) -> str:
    lines = [
        "| split | comparison | n test (pos/neg) | n pairs | pairs | all | surface pairs "
        "| surface all | one-word rule | pairs ± |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for split, res in results.items():
        for name in (*BOUNDED, *REPORTED):
            r = res[name]
            tag = name if name in BOUNDED else f"{name} (reported)"
            sf = r.get("surface", {})
            lines.append(
                f"| {split} | {tag} | {r['test_pos']}/{r['test_neg']} | {r['pairs_n']} "
                f"| {r['pairs']} | {r['all']} | {sf.get('pairs')} | {sf.get('all')} "
                f"| {sf.get('one-word-rule')} | {spread_of(r['pairs'], r['pairs_n'])} |"
            )
        lines.append(
            f"| {split} | regex action (answer/clarify/abstain) | | | | "
            f"{res['regex-action']['balanced_accuracy']} | | | | |"
        )
    return "\n".join(lines)


def worst_bounded(results: dict[str, dict[str, dict]]) -> float:
    vals = [
        r[name]["pairs"]
        for r in results.values()
        for name in BOUNDED
        if r[name]["pairs"] is not None
    ]
    return max(vals) if vals else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--builtin", action="store_true", help="built-in suite, seeds 1+2 -> seed 0")
    ap.add_argument(
        "--suite",
        action="append",
        default=[],
        help="a tasks.jsonl (or a folder holding one); every ordered pair is probed",
    )
    ap.add_argument("--cache", default=None, help="cache folder for the built-in suites")
    ap.add_argument("--train-seeds", default="1,2", help="built-in seeds to train on")
    ap.add_argument("--test-seed", type=int, default=0, help="built-in seed to test on")
    ap.add_argument("--json", default=None, help="write the results here too")
    ap.add_argument("--bound", type=float, default=None, help="exit 1 if a pairs number is above")
    args = ap.parse_args(argv)
    if not args.builtin and len(args.suite) < 2:
        ap.error("give --builtin and/or at least two --suite")
    seeds = [int(x) for x in args.train_seeds.split(",") if x.strip()]
    res = run(
        args.builtin, args.suite, Path(args.cache) if args.cache else None, seeds, args.test_seed
    )
    print(table(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    worst = worst_bounded(res)
    print(f"worst bounded (pairs) balanced accuracy: {worst}")
    if args.bound is not None and worst > args.bound:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
