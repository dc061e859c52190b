"""SUQL compiler benchmark: model calls of ANSWER filters under LIMIT, compiled vs per-row.

Run: ``python benchmarks/bench_suql.py [--rows 10000] [--embedders hashing minilm]
[--mentions 2] [--cut 10] [--json OUT]``. One table of ``--rows`` restaurants with a free-text ``reviews`` column, written
from recorded facts with the SUQL lexicon's wordings (the offline backend reads them back
exactly). For each of the lexicon's six concepts exactly 5 rows support it ("needles"; other
rows hold fillers, other concepts' negative wordings that contain the keyword, and so on), so
the gold result of ``... WHERE ANSWER(reviews, q) = 'Yes' LIMIT 5`` is unique: those 5 rows.

Per query, side by side in one run:
- **naive per-row evaluation**: ANSWER on every row the structural filters keep (what SQLite
  does for ``WHERE ANSWER(...)`` when the rows must all be seen: no LIMIT shortcut), counted by
  running the query without LIMIT and without the compiler;
- **compiled, exact** (the default: DNF, structural first, ranked lazy evaluation: ANSWER walks
  down the retrieval ranking until LIMIT rows pass), per embedder, with and without query
  expansion: model calls (ANSWER evaluations + query-expansion calls), and whether the result
  equals the gold rows;
- **compiled, SUQL's cut** (``--cut k``: only the top LIMIT × k ranked rows are asked), for
  comparison: calls and whether the result is still right;
- **ranking recall**: share of the gold rows inside the top LIMIT × k ranked rows, for several
  k, and the depth (rank of the last gold row, = the exact mode's ANSWER calls here).
Calls are counted as evaluations (what a backend with no cache would be asked: texts repeat
across rows here, so cache misses would flatter every variant). Retrieval, as in SUQL, scores a
row by its best-matching chunk (sentence), against the question and the backend's expansions.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
from clarisql.envs.suql import OfflineBackend, get_config, make_embedder, using
from clarisql.envs.suql import lexicon as L
from clarisql.envs.suql.runtime import chunk_similarity, chunks

NEEDLES = 5
FILLERS = (
    "The food came out hot and well seasoned.",
    "Service was friendly and attentive.",
    "Prices felt fair for the portions.",
    "The bread basket alone is worth the visit.",
    "Solid cooking, nothing fancy.",
    "We waited a while for the bill.",
)
CUISINES = ("Italian", "Thai", "Mexican", "Japanese", "Indian", "Greek")
QUESTIONS = {
    "romantic": "is it good for a romantic date?",
    "quiet": "is it quiet enough for a business meal?",
    "live music": "does it have live music?",
    "outdoor seating": "does it have outdoor seating?",
    "vegan": "does it have vegan options?",
    "family": "is it good for families with kids?",
}


def build(
    path: Path, rows: int, denials: float, mentions: int = 2, seed: int = 0
) -> dict[str, list[int]]:
    """Write the table; return concept -> the ids of the rows that support it (the facts)."""
    rng = random.Random(seed)
    ids = list(range(1, rows + 1))
    needles: dict[str, list[int]] = {}
    pool = ids[:]
    rng.shuffle(pool)
    for i, c in enumerate(L.CONCEPTS):
        needles[c.name] = sorted(pool[i * NEEDLES : (i + 1) * NEEDLES])
    owner = {rid: c for c, rids in needles.items() for rid in rids}
    concept = {c.name: c for c in L.CONCEPTS}
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE restaurants (id INTEGER PRIMARY KEY, cuisine TEXT, rating REAL, reviews TEXT)"
    )
    data = []
    for rid in ids:
        sents = rng.sample(FILLERS, 2)
        if rid in owner:  # ``mentions`` reviewers say so, each in their own words
            for w in rng.sample(concept[owner[rid]].positive, mentions):
                sents.append(w.capitalize() + ".")
        elif rng.random() < denials:  # a denial that contains the keyword (LIKE would match it)
            sents.append(rng.choice(rng.choice(L.CONCEPTS).negative).capitalize() + ".")
        rng.shuffle(sents)
        data.append(
            (rid, rng.choice(CUISINES), round(rng.uniform(3, 5), 1), json.dumps([" ".join(sents)]))
        )
    conn.executemany("INSERT INTO restaurants VALUES (?, ?, ?, ?)", data)
    conn.commit()
    conn.close()
    return needles


def run(sess, sql: str) -> tuple[list[tuple], int, float]:
    t0 = time.perf_counter()
    res = sess.execute(sql)
    if not res.ok:
        raise RuntimeError(f"{sql}: {res.error}")
    st = sess.extensions["suql"].current
    # evaluations = model calls with no cache (texts repeat across rows; every call is counted)
    return res.rows, st.evaluations + st.expansion_calls, time.perf_counter() - t0


class TriggerExpansion(OfflineBackend):
    """The offline backend with a weaker expansion: only the trigger words of the concepts the
    question names (a thesaurus), not the wordings the backend accepts as support."""

    def expand(self, question: str, timeout_s: float = 0.0) -> list[str]:
        return [t for c in L.concepts_in(question) for t in c.triggers]


EXPANSIONS = {"wordings": OfflineBackend(), "triggers": TriggerExpansion(), "none": None}


def ranking(emb, values: list[str], ids: list[int], queries: list[str], gold: list[int], ks):
    """Recall of the gold rows in the top NEEDLES × k ranked rows, and the last gold row's rank."""
    sims = np.array([chunk_similarity(emb, v, queries) for v in values])
    order = np.argsort(-sims, kind="stable")
    rank = {ids[i]: r + 1 for r, i in enumerate(order)}
    rec = {k: len({ids[i] for i in order[: NEEDLES * k]} & set(gold)) / len(gold) for k in ks}
    return rec, max(rank[g] for g in gold)


def _measure(img, limits, sql: str, gold: list[int], backend=None, **cfg) -> dict:
    with using(backend=backend or OfflineBackend(), **cfg):
        get_config().cached.clear()
        with img.session(False, limits) as s:
            rows, calls, secs = run(s, sql)
    return {"calls": calls, "correct": sorted(r[0] for r in rows) == gold, "s": secs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--embedders", nargs="+", default=["hashing", "minilm"])
    ap.add_argument("--cut", type=int, default=10, help="k of SUQL's top LIMIT x k cut (compared)")
    ap.add_argument(
        "--mentions", type=int, default=2, help="positive sentences per needle row (default 2)"
    )
    ap.add_argument(
        "--denials", type=float, default=0.005, help="share of rows denying a concept (hard cases)"
    )
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    limits = SessionLimits(timeout_s=900.0, max_rows=1_000_000, max_bytes=1 << 30)
    ks = (1, 2, 5, 10, 20)
    variants = [(e, x) for e in args.embedders for x in EXPANSIONS]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.sqlite"
        needles = build(path, args.rows, args.denials, args.mentions)
        img = DatabaseImage(path)
        conn = sqlite3.connect(path)
        all_rows = conn.execute("SELECT id, cuisine, reviews FROM restaurants").fetchall()
        conn.close()
        values, ids = [r[2] for r in all_rows], [r[0] for r in all_rows]
        embed_s = {}
        for name in args.embedders:
            t0 = time.perf_counter()
            make_embedder(name).embed(sorted({c for v in values for c in chunks(v)}))
            embed_s[name] = time.perf_counter() - t0
        results = []
        for c, question in QUESTIONS.items():
            gold = needles[c]
            sql = f"SELECT id FROM restaurants WHERE ANSWER(reviews, '{question}') = 'Yes' LIMIT 5"
            naive = _measure(img, limits, sql.replace(" LIMIT 5", ""), gold, embedder="none")
            plain = _measure(img, limits, sql, gold, embedder="none")  # SQLite's LIMIT alone
            row = {"concept": c, "naive": naive, "sqlite_limit": plain, "variants": {}}
            for emb_name, expand in variants:
                key = f"{emb_name}, expansion: {expand}"
                be = EXPANSIONS[expand] or OfflineBackend()
                cfg = {"embedder": emb_name, "expand": expand != "none", "backend": be}
                queries = [question] + (be.expand(question) if expand != "none" else [])
                rec, depth = ranking(make_embedder(emb_name), values, ids, queries, gold, ks)
                row["variants"][key] = {
                    "exact": _measure(img, limits, sql, gold, k=0, **cfg),
                    "cut": _measure(img, limits, sql, gold, k=args.cut, **cfg),
                    "recall_at_k": rec,
                    "depth": depth,
                }
            results.append(row)
    _report(args, results, embed_s, ks)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


def _report(args, results: list[dict], embed_s: dict, ks) -> None:
    print(
        f"rows={args.rows} mentions={args.mentions} denials={args.denials} "
        f"(embedding the chunks: {', '.join(f'{k} {v:.1f} s' for k, v in embed_s.items())})"
    )
    print(
        "| criterion | ranking | naive calls | exact: calls (ratio, same result) | "
        f"cut k={args.cut}: calls (same result) | recall@k {','.join(map(str, ks))} | depth |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        n = r["naive"]["calls"]
        for key, v in r["variants"].items():
            e, c = v["exact"], v["cut"]
            ok = e["correct"] and r["naive"]["correct"]
            print(
                f"| {r['concept']} | {key} | {n} | {e['calls']} ({100 * e['calls'] / n:.2f} %, "
                f"{ok}) | {c['calls']} ({c['correct']}) | "
                f"{', '.join(f'{x:.1f}' for x in v['recall_at_k'].values())} | {v['depth']} |"
            )
    tot_n = sum(r["naive"]["calls"] for r in results)
    for key in results[0]["variants"]:
        for mode in ("exact", "cut"):
            tot = sum(r["variants"][key][mode]["calls"] for r in results)
            right = sum(r["variants"][key][mode]["correct"] for r in results)
            worst = max(r["variants"][key][mode]["calls"] / r["naive"]["calls"] for r in results)
            print(
                f"{key:>30} {mode:>5}: {tot} / {tot_n} naive calls = {100 * tot / tot_n:.2f} % "
                f"(worst query {100 * worst:.2f} %), same result on {right}/{len(results)}"
            )


if __name__ == "__main__":
    sys.exit(main())
