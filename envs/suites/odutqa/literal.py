"""What an ODUTQA-MDC request reads as when taken literally, and what exploring without asking runs.

Both rewrite a task's gold SQL with sqlglot, using only the task's labels (what the user said
and what the gold SQL means) and the list of table captions:

- :func:`literal_sql` is the naive baseline's query (``task.metadata["naive_sql"]``): the request
  taken at its word. A missing scope (city, district, year) reads every table the rest of the
  request allows (their rows ``UNION ALL``-ed under the gold table's name); a wrong scope
  (Error / Unmatch) reads the table the user named, which may not exist; an abbreviated name
  (WHERE ``not-exist``) is matched as written; an unclear SELECT intent (``intent``) reads every
  column (``SELECT *``).
- :func:`exploration_sqls` are the queries an agent that explores instead of asking could run,
  generously knowing the gold SQL's shape: the gold SQL with every WHERE clause removed
  (``no_where``), and the gold SQL with every underspecified part relaxed at once (``relaxed``:
  each vague scope widened to all tables consistent with the parts the user got right, each
  abbreviated name matched as an in-order character pattern, ``LIKE '%济%南%轨%道%集%团%'``).
  The suite's database is built so that neither returns the gold answer on an underspecified
  task.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlglot
from sqlglot import exp

from clarisql.envs.suites.odutqa.db import caption_scope
from clarisql.envs.tasks import Task

_SUFFIX = {"land": "土地成交信息表", "community": "商品房成交价格表"}


def _scope_of(table: str, task: Task, relax: bool) -> dict[str, str | None] | None:
    """The scope the request gives ``table`` (``None`` = any), or ``None`` if it is not vague."""
    domain, city, district, year = caption_scope(table)
    dims: dict[str, str | None] = {
        "city": city,
        "district": district,
        "year": f"{year}年" if year else "",
    }
    touched = False
    for u in task.scope_labels:
        slot = u.label.slot
        if slot in dims and dims[slot] == u.value:
            touched = True
            dims[slot] = None if relax or u.label.kind == "Missing" else u.label.content
    return dims if touched else None


def _candidates(table: str, dims: dict[str, str | None], captions: Iterable[str]) -> list[str]:
    domain = caption_scope(table)[0]
    out = []
    for c in sorted(captions):
        d, city, district, year = caption_scope(c)
        have = {"city": city, "district": district, "year": f"{year}年" if year else ""}
        if d == domain and all(v is None or have[k] == v for k, v in dims.items()):
            out.append(c)
    if out:
        return out
    if domain == "enterprise":  # the table the user named does not exist: read it anyway
        return [f"全国企业{dims['year'] or ''}财务表"]
    return [f"{dims['city'] or ''}{dims['district'] or ''}{_SUFFIX[domain]}"]


def _widen_tables(tree: exp.Expression, task: Task, captions: list[str], relax: bool) -> dict:
    """Point vague tables at their candidates in place; returns the placeholders to expand
    (a union over many tables is spliced in as text: generating it with sqlglot is slow)."""
    spliced: dict[str, str] = {}
    for node in list(tree.find_all(exp.Table)):
        dims = _scope_of(node.name, task, relax)
        if dims is None:
            continue
        cands = _candidates(node.name, dims, captions)
        alias = node.alias_or_name
        if len(cands) == 1:
            node.replace(exp.to_table(cands[0], quoted=True).as_(alias, quoted=True))
            continue
        key = f"__scope_{len(spliced)}__"
        spliced[key] = "(" + " UNION ALL ".join(f'SELECT * FROM "{c}"' for c in cands) + ")"
        node.replace(exp.to_table(key, quoted=True).as_(alias, quoted=True))
    return spliced


def _sql(tree: exp.Expression, spliced: dict[str, str]) -> str:
    text = tree.sql("sqlite")
    for key, union in spliced.items():
        text = text.replace(f'"{key}"', union).replace(key, union)
    return text


def _names(task: Task) -> dict[str, str]:
    return {u.value: u.label.content for u in task.condition_labels if u.value}


def _pattern(surface: str) -> exp.Literal:
    return exp.Literal.string("%" + "%".join(surface) + "%")


def relax_names(tree: exp.Expression, names: dict[str, str]) -> None:
    """Match every full name of ``names`` (full -> surface) by its surface as a pattern, in place."""
    for node in list(tree.find_all(exp.EQ, exp.In)):
        col = node.this
        if not isinstance(col, exp.Column):
            continue
        vals = [node.expression] if isinstance(node, exp.EQ) else list(node.expressions)
        if not any(isinstance(v, exp.Literal) and v.this in names for v in vals):
            continue
        preds = [
            exp.Like(this=col.copy(), expression=_pattern(names[v.this]))
            if isinstance(v, exp.Literal) and v.this in names
            else exp.EQ(this=col.copy(), expression=v.copy())
            for v in vals
        ]
        node.replace(exp.paren(exp.or_(*preds)) if len(preds) > 1 else preds[0])


def _literal_names(tree: exp.Expression, names: dict[str, str]) -> None:
    for lit in list(tree.find_all(exp.Literal)):
        if lit.is_string and lit.this in names:
            lit.replace(exp.Literal.string(names[lit.this]))


def _all_columns(tree: exp.Expression, task: Task) -> None:
    wanted = [u.value for u in task.underspecs if u.label.kind == "intent" and u.value]
    for sel in list(tree.find_all(exp.Select)):
        cols = [e for e in sel.expressions if isinstance(e, exp.Column)]
        if any(w in c.name or c.name in w for c in cols for w in wanted):
            sel.set("expressions", [exp.Star()])


def _parse(task: Task) -> exp.Expression:
    if not task.gold_sql:
        raise ValueError(f"task {task.id} has no gold SQL")
    return sqlglot.parse_one(task.gold_sql.strip().rstrip(";"), read="sqlite")


def literal_sql(task: Task, captions: Iterable[str]) -> str:
    """The naive baseline's query: the request read literally (see the module docstring)."""
    tree = _parse(task)
    spliced = _widen_tables(tree, task, list(captions), relax=False)
    _literal_names(tree, _names(task))
    _all_columns(tree, task)
    return _sql(tree, spliced)


def exploration_sqls(task: Task, captions: Iterable[str]) -> dict[str, str]:
    """Queries exploring without asking could run (see the module docstring), by variant name."""
    out: dict[str, str] = {}
    tree = _parse(task)
    for where in list(tree.find_all(exp.Where)):
        where.pop()
    out["no_where"] = tree.sql("sqlite")
    names = _names(task)
    if task.scope_labels or names:
        tree = _parse(task)
        spliced = _widen_tables(tree, task, list(captions), relax=True)
        relax_names(tree, names)
        out["relaxed"] = _sql(tree, spliced)
    return out


def _solves(session: Any, sql: str, task: Task, failed: list[str] | None = None) -> bool:
    from clarisql.rewards.match import execution_match

    res = session.execute(sql)
    if not res.ok and failed is not None:
        failed.append(task.id)
    ordered = "order by" in (task.gold_sql or "").lower()
    return res.ok and execution_match(res.rows, task.gold_answer, ordered=ordered)


def exploration_probe(suite: Any) -> dict[str, Any]:
    """Run every underspecified task's literal reading and exploration queries on its database.

    Returns ``underspecified`` (the number of such tasks), ``literal_solved`` and
    ``exploration_solved`` (ids of the tasks whose literal reading, or any exploration query,
    returns the gold answer), ``solved_by`` (ids per exploration variant) and
    ``exploration_failed`` (ids whose exploration query raised an SQL error: a probe bug).
    """
    from clarisql.envs.sandbox.database import DatabaseImage

    captions = suite.metadata.get("table_names") or []
    out: dict[str, Any] = {"underspecified": 0, "literal_solved": [], "exploration_solved": []}
    out["exploration_failed"] = []
    by: dict[str, list[str]] = {}
    images = {name: DatabaseImage(spec.path) for name, spec in suite.databases.items()}
    for task in suite.tasks:
        if not task.underspecs or not task.gold_sql:
            continue
        out["underspecified"] += 1
        with images[task.db].session(writable=False) as s:
            if _solves(s, literal_sql(task, captions), task):
                out["literal_solved"].append(task.id)
            queries = exploration_sqls(task, captions).items()
            hits = [k for k, q in queries if _solves(s, q, task, out["exploration_failed"])]
        for k in hits:
            by.setdefault(k, []).append(task.id)
        if hits:
            out["exploration_solved"].append(task.id)
    out["solved_by"] = by
    return out


__all__ = ["exploration_probe", "exploration_sqls", "literal_sql", "relax_names"]
