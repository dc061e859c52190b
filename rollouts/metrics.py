"""Aggregate metrics over finished episodes: pure functions of trajectory lines and records.

A trajectory line is the dict :meth:`clarisql.rollouts.episode.EpisodeResult.to_dict` writes
(task id, trial, turns with parsed actions, the env's episode summary with its
:class:`~clarisql.rewards.EpisodeRecord`, and a ``gold`` view of the task: labels, gold SQL,
answerability). Nothing here opens a database or an environment.

Definitions (per group of episodes: the whole run, or one category)

- **Pass@1**: mean over tasks of ``c/n`` (``n`` trials of the task, ``c`` correct ones, correct
  as :func:`clarisql.rewards.is_correct`). **Pass@k**: mean over tasks of
  ``1 - C(n-c, k)/C(n, k)`` (the unbiased estimator of "at least one of k tries is correct").
  **Pass^k**: mean over tasks of ``C(c, k)/C(n, k)`` ("all k tries are correct", τ-bench).
  For each k, tasks with fewer than k trials are left out.
- **φ_0, φ_10, φ_N**: TrustSQL's reliability score RS(c) (see
  :mod:`clarisql.rewards.reliability`: a stop without any SQL is an abstention; each task's φ is
  the mean over its trials, then the mean over tasks); ``N`` is the number of distinct tasks of
  the whole run, whatever the trials (also inside a category, so the categories' φ_N use the
  same penalty).
- **ECR**, **detection** ``accuracy``/``f1`` per clause and **table_f1** follow ODUTQA-MDC's
  paper (see :mod:`clarisql.rollouts.odutqa_metrics`). clarisql's earlier variants keep other
  names: ``ecr_statements`` (share of every SQL statement the agent ran, ``execute`` actions
  and ``stop`` with ``sql``, that ran without error; ``None`` when it ran none),
  ``detection[clause]["flag"]`` (the binary per-episode flag below) and ``table_f1_final_sql``.
- **Detection flag, per clause** (``detection[clause]["flag"]``): each episode is one binary
  decision per clause. Gold positive: the task has at least one gold label of that clause
  (``intent`` → select; Missing/Error/Unmatch → from; not-exist → where).
  Predicted positive: at least one clarify action the env accepted in the episode carried a
  label of that clause. Accuracy, precision, recall and F1 are taken over episodes (positive
  class = "clause flagged"); precision is ``None`` when nothing was flagged, recall when there
  is no gold positive, and F1 = 2TP/(2TP+FP+FN) only when both are absent. ``labels`` adds a stricter micro P/R/F1 over exact label triples
  (``intent`` matches by kind, others by ``Label.key()``), summed over episodes.
- **Table F1 of the final SQL** (``table_f1_final_sql``): for answerable read tasks with a
  gold SQL, the tables read by the agent's final SQL (:func:`clarisql.rollouts.episode.final_sql_of`) against the gold SQL's
  tables, both parsed with sqlglot (CTE names excluded, names case-folded); an episode with no
  final SQL, or SQL that does not parse, has no predicted tables. Mean over those episodes.
- **Clarifications / turns / SQL errors / invalid actions per episode**: means over episodes.
  ``abstain_rate``: share of explicit abstentions; ``decline_rate``: abstentions plus stops
  without any SQL (TrustSQL's "no SQL predicted").
- **Model calls** (SUQL's ANSWER/SUMMARY, see :func:`model_call_metrics`): backend calls per
  episode and per query that used them, and the cache hit rate; present only when episodes
  report them.
- **Hallucination rate**: share of the agent's messages to the user (clarify turns) whose
  record says ``hallucinated`` (they state query results no executed statement returned, see
  :mod:`clarisql.envs.hallucination`; a record without the flag counts as not hallucinated),
  pooled over the group's episodes, as the env's per-episode ``hallucination_rate``;
  ``hallucinated_episode_rate`` is the share of episodes with at least one such message.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.tasks import Label
from clarisql.rewards import EpisodeRecord, RewardSpec, is_correct, reliability_score, score_episode
from clarisql.rewards.reliability import declined
from clarisql.rollouts.odutqa_metrics import (
    answer_ecr,
    detection_paper,
    episode_facts,
    sql_tables,
    table_retrieval,
)

CLAUSES = ("select", "from", "where")


def summary_metrics(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """Pass@1, φ_0, φ_10, φ_N, clarifications and turns per episode over ``records``."""
    n = len(records)
    if n == 0:
        return {"n_episodes": 0}
    return {
        "n_episodes": n,
        "pass@1": sum(is_correct(r) for r in records) / n,
        "phi_0": reliability_score(records, 0),
        "phi_10": reliability_score(records, 10),
        "phi_N": reliability_score(records, "N"),
        "clarifications_per_episode": sum(
            sum(t.kind == "clarify" for t in r.turns) for r in records
        )
        / n,
        "turns_per_episode": sum(len(r.turns) for r in records) / n,
        "abstain_rate": sum(r.abstained for r in records) / n,
        "decline_rate": sum(declined(r) for r in records) / n,
    }


def records_from_results(results: Iterable[Any]) -> list[EpisodeRecord]:
    return [
        EpisodeRecord.from_dict(r.summary["record"]) for r in results if r.summary.get("record")
    ]


# --- Pass@k / Pass^k ---------------------------------------------------------------------------
def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` of ``n`` trials (``c`` correct) is correct."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that ``k`` of ``n`` trials (``c`` correct) drawn without replacement are all correct."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_hat_k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return math.comb(c, k) / math.comb(n, k)


def pass_metrics(
    correct_by_task: Mapping[str, Sequence[bool]], ks: Iterable[int] | None = None
) -> dict[str, Any]:
    """``pass@1``, ``pass@k`` and ``pass^k`` (dicts k -> value) from each task's trial outcomes."""
    counts = {t: (len(v), sum(bool(x) for x in v)) for t, v in correct_by_task.items() if len(v)}
    if not counts:
        return {"pass@1": None, "pass@k": {}, "pass^k": {}}
    max_n = max(n for n, _ in counts.values())
    ks = sorted(set(ks)) if ks is not None else list(range(1, max_n + 1))
    at: dict[int, float] = {}
    hat: dict[int, float] = {}
    for k in ks:
        eligible = [(n, c) for n, c in counts.values() if n >= k]
        if not eligible:
            continue
        at[k] = sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible)
        hat[k] = sum(pass_hat_k(n, c, k) for n, c in eligible) / len(eligible)
    p1 = sum(c / n for n, c in counts.values()) / len(counts)
    return {"pass@1": p1, "pass@k": at, "pass^k": hat}


def set_prf(pred: Iterable[Any], gold: Iterable[Any]) -> tuple[float, float, float]:
    """Precision, recall, F1 of a predicted set against a gold set (both empty: 1, 1, 1)."""
    p, g = set(pred), set(gold)
    if not p and not g:
        return 1.0, 1.0, 1.0
    tp = len(p & g)
    prec = tp / len(p) if p else 0.0
    rec = tp / len(g) if g else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


# --- per-episode facts -----------------------------------------------------------------------
@dataclass
class EpisodeStats:
    """The facts of one trajectory line the aggregate metrics need."""

    task_id: str
    trial: int
    category: str
    correct: bool
    record: EpisodeRecord
    reward: float
    reward_components: dict[str, float]
    n_turns: int
    n_clarify: int
    n_invalid: int
    n_sql: int
    n_sql_ok: int
    hallucinated_turns: int
    n_messages: int
    gold_clauses: frozenset[str]
    pred_clauses: frozenset[str]
    gold_labels: frozenset[tuple[str, str, str]]
    pred_labels: frozenset[tuple[str, str, str]]
    table_prf: tuple[float, float, float] | None = None
    end: str = "running"
    extra: dict[str, Any] = field(default_factory=dict)
    #: SUQL's model-call counts of the episode (``summary["suql"]``), ``None`` without them
    suql: dict[str, Any] | None = None


def _label_key(lb: Label) -> tuple[str, str, str]:
    return ("intent", "", "") if lb.kind == "intent" else lb.key()


def clarify_labels(turns: Sequence[Mapping[str, Any]]) -> list[Label]:
    """Labels of every clarify action the env accepted (no error), in order."""
    out: list[Label] = []
    for t in turns:
        act = t.get("action")
        if isinstance(act, Mapping) and act.get("type") == "clarify" and t.get("error") is None:
            for raw in act.get("labels") or []:
                try:
                    out.append(Label.parse(raw))
                except ValueError:
                    continue
    return out


def sql_counts(turns: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(statements run, statements that ran without error): ``execute`` and ``stop`` with sql."""
    n = ok = 0
    for t in turns:
        act = t.get("action")
        if not isinstance(act, Mapping):
            continue
        ran = act.get("type") == "execute" or (act.get("type") == "stop" and act.get("sql"))
        if ran:
            n += 1
            ok += t.get("error") is None
    return n, ok


def _record_of(line: Mapping[str, Any]) -> EpisodeRecord:
    rec = (line.get("summary") or {}).get("record")
    if rec:
        return EpisodeRecord.from_dict(rec)
    gold = line.get("gold") or {}
    # The env ended without a record (an internal error): count it as a failed episode.
    return EpisodeRecord(
        task_id=str(line.get("task_id")),
        category=str(line.get("category", "")),
        answerable=bool(gold.get("answerable", True)),
        writable=bool(gold.get("writable", False)),
        unanswerable_kind=gold.get("unanswerable_kind"),
        end="error",
    )


def episode_stats(line: Mapping[str, Any], spec: RewardSpec | None = None) -> EpisodeStats:
    """Per-episode facts from a trajectory line; ``spec`` re-scores the reward (else the saved one)."""
    from clarisql.rollouts.episode import final_sql_of

    turns = list(line.get("turns") or [])
    rec = _record_of(line)
    raw_turns = ((line.get("summary") or {}).get("record") or {}).get("turns") or []
    gold = line.get("gold") or {}
    gold_lbls = []
    for raw in gold.get("labels") or []:
        try:
            gold_lbls.append(Label.parse(raw))
        except ValueError:
            continue
    pred_lbls = clarify_labels(turns)
    n_sql, n_ok = sql_counts(turns)
    if spec is not None:
        reward, comps = score_episode(rec, spec)
    else:
        summary = line.get("summary") or {}
        reward = float(line.get("reward", summary.get("reward", 0.0)) or 0.0)
        comps = dict(summary.get("reward_components") or {})
    table_prf = None
    if gold.get("answerable", True) and not gold.get("writable", False) and gold.get("gold_sql"):
        gold_tables = sql_tables(gold["gold_sql"])
        if gold_tables is not None:
            final = line.get("final_sql") if "final_sql" in line else final_sql_of(turns)
            table_prf = set_prf(sql_tables(final) or (), gold_tables)
    return EpisodeStats(
        task_id=str(line.get("task_id")),
        trial=int(line.get("trial", 0)),
        category=str(line.get("category") or rec.category),
        correct=is_correct(rec),
        record=rec,
        reward=reward,
        reward_components=comps,
        n_turns=len(turns),
        n_clarify=sum(t.kind == "clarify" for t in rec.turns),
        n_invalid=sum(not t.valid for t in rec.turns),
        n_sql=n_sql,
        n_sql_ok=n_ok,
        hallucinated_turns=sum(
            bool(t.get("hallucinated", False))
            for t in raw_turns
            if isinstance(t, Mapping) and t.get("kind") == "clarify"
        ),
        n_messages=sum(t.kind == "clarify" for t in rec.turns),
        gold_clauses=frozenset(lb.clause for lb in gold_lbls),
        pred_clauses=frozenset(lb.clause for lb in pred_lbls),
        gold_labels=frozenset(_label_key(lb) for lb in gold_lbls),
        pred_labels=frozenset(_label_key(lb) for lb in pred_lbls),
        table_prf=table_prf,
        end=rec.end,
        extra=episode_facts(turns, gold),
        suql=(line.get("summary") or {}).get("suql"),
    )


# --- aggregation -------------------------------------------------------------------------------
def detection_metrics(stats: Sequence[EpisodeStats]) -> dict[str, Any]:
    """Per-clause detection as ODUTQA-MDC scores it (accuracy, macro P/R/F1, ``f1_micro``), the
    binary flag variant under ``"flag"``, and exact-label micro P/R/F1 under ``"labels"``."""
    out: dict[str, Any] = {}
    n = len(stats)
    for clause in CLAUSES:
        tp = sum(clause in s.pred_clauses and clause in s.gold_clauses for s in stats)
        fp = sum(clause in s.pred_clauses and clause not in s.gold_clauses for s in stats)
        fn = sum(clause not in s.pred_clauses and clause in s.gold_clauses for s in stats)
        tn = n - tp - fp - fn
        prec = tp / (tp + fp) if tp + fp else None
        rec = tp / (tp + fn) if tp + fn else None
        f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
        out[clause] = {
            "accuracy": (tp + tn) / n if n else None,
            "precision": prec,
            "recall": rec,
            "f1": f1,
            "support": tp + fn,
            "predicted": tp + fp,
        }
    tp = sum(len(s.pred_labels & s.gold_labels) for s in stats)
    npred = sum(len(s.pred_labels) for s in stats)
    ngold = sum(len(s.gold_labels) for s in stats)
    prec = tp / npred if npred else None
    rec = tp / ngold if ngold else None
    f1 = 2 * tp / (npred + ngold) if npred + ngold else None
    paper = detection_paper(stats)
    for clause in CLAUSES:
        paper[clause]["flag"] = out[clause]
    out.update(paper)
    out["labels"] = {
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "support": ngold,
        "predicted": npred,
    }
    return out


def model_call_metrics(stats: Sequence[EpisodeStats]) -> dict[str, Any]:
    """SUQL's ANSWER/SUMMARY cost over episodes that report it (``{}`` when none does).

    ``model_calls_per_episode``: backend calls (cache misses, query-expansion calls of the
    retrieval ranking included) per episode;
    ``model_calls_per_query``: per SQL statement that called ANSWER/SUMMARY;
    ``model_cache_hit_rate``: cache hits / evaluations.
    """
    rep = [s.suql for s in stats if s.suql]
    if not rep:
        return {}
    calls = sum(int(r.get("model_calls", 0)) + int(r.get("expansion_calls", 0)) for r in rep)
    queries = sum(int(r.get("queries", 0)) for r in rep)
    evals = sum(int(r.get("evaluations", 0)) for r in rep)
    hits = sum(int(r.get("cache_hits", 0)) for r in rep)
    return {
        "model_calls": calls,
        "model_queries": queries,
        "model_calls_per_episode": calls / len(stats),
        "model_calls_per_query": calls / queries if queries else None,
        "model_evaluations": evals,
        "model_cache_hit_rate": hits / evals if evals else None,
    }


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def aggregate(stats: Sequence[EpisodeStats], phi_n: int | None = None) -> dict[str, Any]:
    """Metrics of one group of episodes (see the module docstring); ``phi_n`` overrides N of φ_N."""
    n = len(stats)
    if n == 0:
        return {"n_episodes": 0}
    by_task: dict[str, list[bool]] = defaultdict(list)
    for s in stats:
        by_task[s.task_id].append(s.correct)
    pm = pass_metrics(by_task)
    recs = [s.record for s in stats]
    c_n = float(phi_n if phi_n is not None else len(by_task))

    n_sql = sum(s.n_sql for s in stats)
    n_ok = sum(s.n_sql_ok for s in stats)
    tables = [s.table_prf for s in stats if s.table_prf is not None]
    n_msg = sum(s.n_messages for s in stats)
    comps: dict[str, float] = defaultdict(float)
    for s in stats:
        for k, v in s.reward_components.items():
            comps[k] += v
    return {
        "n_episodes": n,
        "n_tasks": len(by_task),
        "trials": max(len(v) for v in by_task.values()),
        "pass@1": pm["pass@1"],
        "pass@k": pm["pass@k"],
        "pass^k": pm["pass^k"],
        "phi_0": reliability_score(recs, 0.0),
        "phi_10": reliability_score(recs, 10.0),
        "phi_N": reliability_score(recs, c_n),
        "phi_N_c": c_n,
        **answer_ecr(stats),
        "ecr_statements": n_ok / n_sql if n_sql else None,
        "sql_statements": n_sql,
        "sql_errors": n_sql - n_ok,
        "sql_errors_per_episode": (n_sql - n_ok) / n,
        "invalid_actions_per_episode": sum(s.n_invalid for s in stats) / n,
        "clarifications_per_episode": sum(s.n_clarify for s in stats) / n,
        "turns_per_episode": sum(s.n_turns for s in stats) / n,
        "abstain_rate": sum(s.end == "abstain" for s in stats) / n,
        "decline_rate": sum(declined(s.record) for s in stats) / n,
        "end_reasons": dict(sorted(Counter(s.end for s in stats).items())),
        "hallucination_rate": (sum(s.hallucinated_turns for s in stats) / n_msg) if n_msg else 0.0,
        "hallucinated_episode_rate": sum(s.hallucinated_turns > 0 for s in stats) / n,
        "detection": detection_metrics(stats),
        **table_retrieval(stats),
        "table_precision_final_sql": _mean([t[0] for t in tables]),
        "table_recall_final_sql": _mean([t[1] for t in tables]),
        "table_f1_final_sql": _mean([t[2] for t in tables]),
        "table_episodes_final_sql": len(tables),
        "reward_mean": sum(s.reward for s in stats) / n,
        "reward_components": {k: v / n for k, v in sorted(comps.items())},
        **model_call_metrics(stats),
    }


def compute_metrics(
    lines: Iterable[Mapping[str, Any]],
    spec: RewardSpec | None = None,
    *,
    stats: Sequence[EpisodeStats] | None = None,
) -> dict[str, Any]:
    """Run metrics over trajectory lines: the overall aggregate plus ``by_category``, and
    ``simulator_fallback`` (episodes whose model-played user fell back to the offline user).
    ``stats``: the lines' :func:`episode_stats`, when the caller already has them (a report
    that also plots them computes them once)."""
    lines = list(lines)
    if stats is None:
        stats = [episode_stats(line, spec) for line in lines]
    out = aggregate(stats)
    fallbacks = [(line.get("summary") or {}).get("simulator_fallback") for line in lines]
    fallbacks = [str(r) for r in fallbacks if r]
    if fallbacks:
        reasons = Counter(r[:120] for r in fallbacks).most_common(3)
        out["simulator_fallback"] = {"episodes": len(fallbacks), "reasons": dict(reasons)}
    groups: dict[str, list[EpisodeStats]] = defaultdict(list)
    for s in stats:
        groups[s.category].append(s)
    n_tasks = len({s.task_id for s in stats})
    out["by_category"] = {cat: aggregate(g, phi_n=n_tasks) for cat, g in sorted(groups.items())}
    return out


def rescore(lines: Iterable[Mapping[str, Any]], spec: RewardSpec) -> dict[str, Any]:
    """Mean reward (overall and per category) and mean components of saved episodes under ``spec``."""
    rewards: list[float] = []
    comps: dict[str, float] = defaultdict(float)
    by_cat: dict[str, list[float]] = defaultdict(list)
    by_task: dict[str, list[float]] = defaultdict(list)
    for line in lines:
        rec = _record_of(line)
        total, c = score_episode(rec, spec)
        rewards.append(total)
        by_cat[str(line.get("category") or rec.category)].append(total)
        by_task[str(line.get("task_id"))].append(total)
        for k, v in c.items():
            comps[k] += v
    n = len(rewards)
    return {
        "spec": spec.name,
        "n_episodes": n,
        "reward_mean": sum(rewards) / n if n else None,
        "reward_components": {k: v / n for k, v in sorted(comps.items())} if n else {},
        "by_category": {k: sum(v) / len(v) for k, v in sorted(by_cat.items())},
        "by_task": {k: sum(v) / len(v) for k, v in by_task.items()},
    }
