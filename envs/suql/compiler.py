"""SUQL's optimizing compiler: rewrite one statement so that ANSWER runs on as few rows as possible.

Input: one SQL statement (SQLite dialect) that may call ``ANSWER``/``SUMMARY``. Output: a
:class:`Plan` whose ``sql`` SQLite runs with the same meaning (up to the retrieval prefilter
below, as in SUQL). Statements without free-text calls, and statements sqlglot cannot parse,
come back unchanged (the sandbox then reports SQLite's own error).

For every SELECT whose WHERE calls ANSWER:
1. **Disjunctive normal form, structural predicates first.** The WHERE is put in DNF (sqlglot's
   normalizer, skipped when DNF would blow up). In each conjunction the predicates without
   free-text calls are kept as plain terms and the free-text ones are wrapped in
   ``CASE WHEN <structural> THEN <free-text> ELSE 0 END``, so ANSWER is called only on rows the
   other filters keep (SQLite evaluates CASE lazily; a bare AND gives no order guarantee).
   Disjunctions without free text come first.
2. **Lazy evaluation under LIMIT.** With ``LIMIT n`` on a single-table SELECT (no GROUP BY,
   aggregate or window), the rows that pass the structural filters are produced in a chosen
   order by a subquery with a LIMIT (which SQLite neither flattens nor pushes the outer WHERE
   into), and the outer query filters them with ANSWER and stops at ``n`` rows. With an ORDER BY
   that order is the query's own, so the result is exact: ANSWER is asked about the rows in
   that order until ``n`` pass.
3. **Ranked lazy evaluation** (``rank=True``, no ORDER BY): the subquery ranks the rows by how
   similar their texts are to the ANSWER questions (``suql_similarity``: best chunk against the
   question and its expansions) and ANSWER walks down that ranking until ``n`` rows pass (or
   the rows run out). The ranking only decides which rows are asked first; the result is one
   SQL allows (any ``n`` rows that pass), and when exactly ``n`` rows pass it is exactly them,
   so no gold row is ever cut off. SQLite streams the ranked rows one at a time: the limiting
   case of SUQL's growing batches, with the fewest calls a sequential backend can make.
4. **SUQL's top-k cut** (``k > 0``, approximate, opt-in): the subquery keeps only the
   ``(n + offset) * k`` best-ranked rows, as SUQL sends only the top LIMIT × k candidates to the
   model; with an ORDER BY they are then sorted by it. This bounds the calls of a query with
   fewer than ``n`` matches, and is the one rewrite that may change a result: a row outside the
   top candidates is never asked about.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize import normalization_distance, normalize

FREE_FUNCS = frozenset({"ANSWER", "SUMMARY"})
SIM_FUNC = "suql_similarity"
MAX_DNF_DISTANCE = 64


@dataclass
class Plan:
    """A compiled statement: the SQL to run and what the compiler did to it."""

    sql: str
    rewritten: bool = False
    steps: list[str] = field(default_factory=list)
    #: (table, column) pairs whose texts the prefilter embeds (prewarmed in one batch)
    prefilter_columns: list[tuple[str, str]] = field(default_factory=list)


def _free_calls(node: exp.Expression) -> list[exp.Anonymous]:
    return [
        n
        for n in node.find_all(exp.Anonymous)
        if isinstance(n.this, str) and n.this.upper() in FREE_FUNCS
    ]


def has_free_text(node: exp.Expression) -> bool:
    return bool(_free_calls(node))


def _terms(node: exp.Expression, kind: type[exp.Connector]) -> list[exp.Expression]:
    node = node.unnest()
    if isinstance(node, kind):
        return [t.unnest() for t in node.flatten()]
    return [node]


def _and(terms: list[exp.Expression]) -> exp.Expression:
    return exp.and_(*[exp.paren(t, copy=False) if isinstance(t, exp.Or) else t for t in terms])


def _guarded(structural: list[exp.Expression], free: list[exp.Expression]) -> exp.Expression:
    body = _and(free)
    if not structural:
        return body
    return exp.Case(ifs=[exp.If(this=_and(structural), true=body)], default=exp.Literal.number(0))


def may_rewrite(sql: object) -> bool:
    """Whether :func:`compile_sql` could change ``sql`` at all (it names ANSWER or SUMMARY)."""
    if not isinstance(sql, str):
        return False
    low = sql.lower()
    return "answer" in low or "summary" in low


def compile_sql(sql: object, k: int = 0, rank: bool = False) -> Plan:
    """Compile one statement (see the module docstring); never raises.

    ``rank``: rank rows by retrieval similarity for lazy evaluation (an embedder is available);
    ``k > 0``: also cut the ranking at the top ``(LIMIT + OFFSET) * k`` rows (approximate).
    """
    if not may_rewrite(sql):
        return Plan(sql)  # type: ignore[arg-type]
    try:
        trees = sqlglot.parse(sql, read="sqlite")
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
        return Plan(sql)
    if len(trees) != 1 or trees[0] is None or not has_free_text(trees[0]):
        return Plan(sql)
    tree = trees[0]
    plan = Plan(sql)
    try:
        for select in list(tree.find_all(exp.Select)):
            _rewrite_select(select, k, rank, plan)
            _defer_projection(select, plan)
        if plan.steps:
            plan.sql = tree.sql(dialect="sqlite")
            plan.rewritten = True
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError, TypeError):
        return Plan(sql)
    return plan


def _rewrite_select(select: exp.Select, k: int, rank: bool, plan: Plan) -> None:
    where = select.args.get("where")
    if where is None or not has_free_text(where.this):
        return
    cond = where.this
    if normalization_distance(cond, dnf=True) <= MAX_DNF_DISTANCE:
        cond = normalize(cond.copy(), dnf=True)
    disjuncts = []
    for d in _terms(cond, exp.Or):
        conj = _terms(d, exp.And)
        s = [t for t in conj if not has_free_text(t)]
        f = [t for t in conj if has_free_text(t)]
        disjuncts.append((s, f))
    disjuncts.sort(key=lambda sf: bool(sf[1]))  # structural-only disjunctions first (stable)
    if len(disjuncts) == 1:
        s, f = disjuncts[0]
        new_where = _and([*s, _guarded(s, f)])
    else:
        new_where = exp.or_(
            *[exp.paren(_and(s) if not f else _guarded(s, f), copy=False) for s, f in disjuncts]
        )
    select.set("where", exp.Where(this=new_where))
    plan.steps.append("dnf+structural-first")
    _lazy(select, disjuncts, k, rank, plan)


def _simple_limited(select: exp.Select) -> tuple[int, int, exp.Table] | None:
    """(limit, offset, table) of a single-table SELECT with literal LIMIT/OFFSET and no GROUP BY,
    HAVING, aggregate, window or join; else ``None``."""
    n = _int_literal(select.args.get("limit")) if select.args.get("limit") else None
    off = _int_literal(select.args.get("offset"))
    src = select.args.get("from_") or select.args.get("from")
    if n is None or off is None or src is None or not isinstance(src.this, exp.Table):
        return None
    if select.args.get("joins") or select.args.get("group") or select.args.get("having"):
        return None
    if any(select.find(t) for t in (exp.AggFunc, exp.Window)):
        return None
    return n, off, src.this


def _order_is_structural(select: exp.Select) -> bool:
    """ORDER BY exists, has no free-text call and names no select alias or ordinal."""
    order = select.args.get("order")
    if order is None or has_free_text(order):
        return False
    aliases = {e.alias for e in select.expressions if isinstance(e, exp.Alias)}
    for o in order.expressions:
        if isinstance(o.this, exp.Literal):
            return False
        if any(c.name in aliases and not c.table for c in o.find_all(exp.Column)):
            return False
    return True


def _defer_projection(select: exp.Select, plan: Plan) -> None:
    """ANSWER/SUMMARY in the select list of a sorted, limited query: sort and cut first (in a
    subquery), then evaluate the select list on the kept rows only."""
    where = select.args.get("where")
    if select.args.get("distinct") or (where is not None and has_free_text(where)):
        return
    if not any(has_free_text(e) for e in select.expressions):
        return
    shape = _simple_limited(select)
    if shape is None or not _order_is_structural(select):
        return
    _, _, table = shape
    inner = _all_from(select, table)
    if where is not None:
        inner = inner.where(where.this.copy())
    inner = inner.order_by(*[o.copy() for o in select.args["order"].expressions])
    inner.set("limit", select.args["limit"].copy())
    if select.args.get("offset") is not None:
        inner.set("offset", select.args["offset"].copy())
    for key in ("where", "limit", "offset"):
        select.set(key, None)
    key = "from_" if "from_" in select.args else "from"
    select.set(key, exp.From(this=inner.subquery(table.alias_or_name)))
    plan.steps.append("deferred-projection")


_ROWID_NAMES = ("rowid", "oid", "_rowid_")


def _all_from(select: exp.Select, table: exp.Table) -> exp.Select:
    """``SELECT * FROM table`` for a subquery standing in for ``table`` in ``select``, also
    passing on the row-id names (``rowid``, ``oid``, ``_rowid_``) that ``select`` uses: ``*``
    leaves them out, and the rewrite must keep valid SQLite valid. (On a table that declares a
    column of that name the name means the column, in the subquery as outside it.)"""
    used = {
        c.name.lower()
        for c in select.find_all(exp.Column)
        if isinstance(c.this, exp.Identifier) and c.find_ancestor(exp.Select) is select
    }
    keep = [n for n in _ROWID_NAMES if n in used]
    items = [exp.alias_(exp.column(n), n) for n in keep]
    return exp.select(*items, exp.Star()).from_(table.copy())


def _int_literal(node: exp.Expression | None) -> int | None:
    if node is None:
        return 0
    e = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return int(e.this)
        except ValueError:
            return None
    return None


def _lazy(
    select: exp.Select,
    disjuncts: list[tuple[list[exp.Expression], list[exp.Expression]]],
    k: int,
    rank: bool,
    plan: Plan,
) -> None:
    limit = select.args.get("limit")
    if limit is None:
        return
    n, off = _int_literal(limit), _int_literal(select.args.get("offset"))
    src = select.args.get("from_") or select.args.get("from")
    if n is None or off is None or src is None or not isinstance(src.this, exp.Table):
        return
    if select.args.get("joins") or select.args.get("group") or select.args.get("having"):
        return
    if any(select.find(t) for t in (exp.AggFunc, exp.Window)):
        return
    order = select.args.get("order")
    aliases = {e.alias for e in select.expressions if isinstance(e, exp.Alias)}
    if order is not None:
        if has_free_text(order):
            return
        for o in order.expressions:
            if isinstance(o.this, exp.Literal):
                return  # ORDER BY 1: refers to the select list
            if any(c.name in aliases and not c.table for c in o.find_all(exp.Column)):
                return
    table = src.this
    alias = table.alias_or_name
    structural = None
    if all(s for s, _ in disjuncts):
        structural = exp.or_(*[exp.paren(_and(s), copy=False) for s, _ in disjuncts])
    inner = _all_from(select, table)
    if structural is not None:
        inner = inner.where(structural.copy())
    questions = []
    for _, f in disjuncts:
        for t in f:
            for call in _free_calls(t):
                args = call.expressions
                if call.this.upper() == "ANSWER" and len(args) == 2:
                    if isinstance(args[1], exp.Literal) and args[1].is_string:
                        questions.append((args[0], args[1]))
    cut = k > 0
    if (rank or cut) and questions and n > 0 and (cut or order is None):
        sims = [
            exp.Anonymous(this=SIM_FUNC, expressions=[a.copy(), q.copy()]) for a, q in questions
        ]
        score = sims[0]
        for s in sims[1:]:
            score = exp.Add(this=score, expression=s)
        inner = inner.order_by(exp.Ordered(this=score, desc=True))
        inner = inner.limit((n + off) * k if cut else -1)
        for a, _ in questions:
            if isinstance(a, exp.Column):
                plan.prefilter_columns.append((table.name, a.name))
        plan.steps.append(f"prefilter top {(n + off) * k}" if cut else "ranked")
        if order is not None:
            inner = exp.select("*").from_(inner.subquery(alias))
    elif order is None:
        return  # SQLite already stops at LIMIT rows when nothing is sorted
    if order is not None:
        inner = inner.order_by(*[o.copy() for o in order.expressions]).limit(-1)
        select.set("order", None)
    select.set("from_" if "from_" in select.args else "from", exp.From(this=inner.subquery(alias)))
    plan.steps.append("lazy-limit")


__all__ = ["FREE_FUNCS", "Plan", "compile_sql", "has_free_text"]
