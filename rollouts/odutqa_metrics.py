"""ODUTQA-MDC's metrics as its paper and evaluation scripts define them (pure functions).

:mod:`clarisql.rollouts.metrics` reports these under the paper's names (``detection[clause]``
``accuracy`` / ``f1``, ``ecr``, ``table_f1``) and keeps clarisql's earlier variants under other
names. Definitions, per group of episodes:

- **Detection accuracy, per clause** (SELECT / FROM / WHERE): over ALL episodes, the share
  whose predicted labels of that clause equal the gold ones exactly, as sets (an episode with
  no gold label of the clause is right when it flagged none). Predicted labels are those of
  every clarify action the env accepted; labels compare by :meth:`clarisql.envs.tasks.Label.key`
  (``intent`` by kind only).
- **Detection macro F1, per clause**: over the episodes that HAVE a gold label of that clause
  (the underspecified ones), the mean of each episode's F1 of predicted against gold label
  triples (``2|P∩G| / (|P|+|G|)``); ``precision`` and ``recall`` are the same means.
  ``f1_micro`` pools the triples of those episodes instead (TP/FP/FN summed, as the
  published scope- and WHERE-check scripts do).
- **ECR** (executable-command rate): over answerable read episodes, the share whose ANSWER
  query (the ``stop`` action's SQL, else the last successful ``execute`` that returned rows:
  :func:`clarisql.rollouts.episode.final_sql_of`) executed without error; an episode that
  produced no answer query counts as not executable, as in the paper's evaluation script.
  ``ecr_generated`` divides by the episodes that did produce one; ``answer_sql_rate`` is that
  share. Exploratory statements are not counted (clarisql's per-statement rate is
  ``ecr_statements``).
- **Table retrieval P/R/F1**: over answerable read episodes with a gold SQL, the tables the
  agent retrieved or used (named in any statement it ran without error, answer query
  included; parsed with sqlglot, CTE names excluded, case-folded) against the gold SQL's
  tables; counts are pooled over episodes (P = Σ|pred∩gold| / Σ|pred|, R = Σ|pred∩gold| /
  Σ|gold|, F1 from P and R), as the paper's table-retrieval script does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

import sqlglot
from sqlglot import exp

CLAUSES = ("select", "from", "where")
_SCOPE = ("missing", "error", "unmatch")


class _Stats(Protocol):
    gold_labels: frozenset[tuple[str, str, str]]
    pred_labels: frozenset[tuple[str, str, str]]
    extra: dict[str, Any]


# --- SQL tables ----------------------------------------------------------------------------------
@lru_cache(maxsize=8192)
def sql_tables(sql: str | None) -> frozenset[str] | None:
    """Tables a statement reads or writes (sqlglot, SQLite dialect), CTE names excluded.

    ``None`` when ``sql`` is missing or does not parse.
    """
    if not isinstance(sql, str) or not sql.strip():
        return None
    try:
        trees = [t for t in sqlglot.parse(sql, read="sqlite") if t is not None]
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
        return None
    if not trees:
        return None
    names: set[str] = set()
    ctes: set[str] = set()
    for tree in trees:
        ctes |= {c.alias_or_name.casefold() for c in tree.find_all(exp.CTE) if c.alias_or_name}
        names |= {t.name.casefold() for t in tree.find_all(exp.Table) if t.name}
    return frozenset(names - ctes)


def clause_of_key(key: tuple[str, str, str]) -> str:
    """The clause of a label key (``Label.key()`` form: kind lower-cased first)."""
    kind = key[0]
    if kind == "intent":
        return "select"
    return "from" if kind in _SCOPE else "where"


def answer_query_ok(turns: Sequence[Mapping[str, Any]]) -> bool | None:
    """Whether the episode's answer query executed without error; ``None`` when it has none.

    The answer query is the final ``stop``'s SQL when given (its turn's ``error`` tells), else
    the last successful ``execute`` that returned rows (ran without error by construction).
    """
    from clarisql.rollouts.episode import final_sql_of

    for t in turns:
        act = t.get("action")
        if isinstance(act, Mapping) and act.get("type") == "stop":
            sql = act.get("sql")
            if isinstance(sql, str) and sql.strip():
                return t.get("error") is None
            break
    return True if final_sql_of(list(turns)) is not None else None


def used_tables(turns: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """Tables named in every statement the agent ran without error (execute and stop SQL)."""
    out: set[str] = set()
    for t in turns:
        act = t.get("action")
        if not isinstance(act, Mapping) or act.get("type") not in ("execute", "stop"):
            continue
        if t.get("error") is None:
            out |= sql_tables(act.get("sql")) or set()
    return frozenset(out)


def episode_facts(turns: Sequence[Mapping[str, Any]], gold: Mapping[str, Any]) -> dict[str, Any]:
    """The per-episode facts these metrics need (stored in ``EpisodeStats.extra``)."""
    read = bool(gold.get("answerable", True)) and not gold.get("writable", False)
    gold_tables = sql_tables(gold.get("gold_sql")) if read else None
    return {
        "answer_read": read,
        "answer_sql_ok": answer_query_ok(turns) if read else None,
        "tables_used": sorted(used_tables(turns)) if gold_tables is not None else None,
        "gold_tables": sorted(gold_tables) if gold_tables is not None else None,
    }


def _of_clause(keys: Iterable[tuple[str, str, str]], clause: str) -> set[tuple[str, str, str]]:
    return {k for k in keys if clause_of_key(k) == clause}


def detection_paper(stats: Sequence[_Stats]) -> dict[str, dict[str, Any]]:
    """Per clause: accuracy over all episodes, macro (and micro) P/R/F1 over underspecified ones."""
    out: dict[str, dict[str, Any]] = {}
    n = len(stats)
    for clause in CLAUSES:
        exact = 0
        precs: list[float] = []
        recs: list[float] = []
        f1s: list[float] = []
        tp = fp = fn = flagged = 0
        for s in stats:
            g = _of_clause(s.gold_labels, clause)
            p = _of_clause(s.pred_labels, clause)
            exact += p == g
            flagged += bool(p)
            if not g:
                continue
            hit = len(p & g)
            precs.append(hit / len(p) if p else 0.0)
            recs.append(hit / len(g))
            f1s.append(2 * hit / (len(p) + len(g)))
            tp, fp, fn = tp + hit, fp + len(p - g), fn + len(g - p)
        out[clause] = {
            "accuracy": exact / n if n else None,
            "precision": _mean(precs),
            "recall": _mean(recs),
            "f1": _mean(f1s),
            "f1_micro": 2 * tp / (2 * tp + fp + fn) if f1s else None,
            "support": len(f1s),
            "predicted": flagged,
        }
    return out


def answer_ecr(stats: Sequence[_Stats]) -> dict[str, Any]:
    """``ecr``, ``ecr_generated``, ``answer_sql_rate`` over answerable read episodes."""
    facts = [s.extra for s in stats if s.extra.get("answer_read")]
    made = [f["answer_sql_ok"] for f in facts if f.get("answer_sql_ok") is not None]
    ok = sum(bool(x) for x in made)
    return {
        "ecr": ok / len(facts) if facts else None,
        "ecr_generated": ok / len(made) if made else None,
        "answer_sql_rate": len(made) / len(facts) if facts else None,
        "ecr_episodes": len(facts),
    }


def table_retrieval(stats: Sequence[_Stats]) -> dict[str, Any]:
    """Pooled table-retrieval precision, recall and F1 (see the module docstring)."""
    hit = npred = ngold = eps = 0
    for s in stats:
        gold, used = s.extra.get("gold_tables"), s.extra.get("tables_used")
        if gold is None or used is None:
            continue
        eps += 1
        hit += len(set(gold) & set(used))
        npred += len(used)
        ngold += len(gold)
    if not eps:
        return {
            "table_precision": None,
            "table_recall": None,
            "table_f1": None,
            "table_episodes": 0,
        }
    p = hit / npred if npred else 0.0
    r = hit / ngold if ngold else 1.0
    return {
        "table_precision": p,
        "table_recall": r,
        "table_f1": 2 * p * r / (p + r) if p + r else 0.0,
        "table_episodes": eps,
    }


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


__all__ = [
    "answer_ecr",
    "answer_query_ok",
    "clause_of_key",
    "detection_paper",
    "episode_facts",
    "table_retrieval",
    "used_tables",
]
