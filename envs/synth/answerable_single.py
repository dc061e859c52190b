"""Single-table templates of :mod:`.answerable` (the contract is that module's).

Lists, lookups and thresholds (simple); counts, aggregates, groups, top-k and yearly series
(moderate); above-average subqueries, rank-per-group and share windows, HAVING against the
overall mean (challenging).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clarisql.envs.synth.column_roles import agg_names
from clarisql.envs.synth.names import split_name
from clarisql.envs.synth.phrasing import (
    ABOVE,
    AGGREGATE,
    ATTR_OF_RECORD,
    ATTR_WHERE,
    COUNT,
    COUNT_PER_GROUP,
    FILTER,
    PER_GROUP,
    RANKING,
    ROWS_WHERE,
    agg_words,
    and_list,
    attr_words,
    key_words,
    pick,
    plural,
    quote,
    row_noun,
    rows_noun,
)
from clarisql.envs.synth.templates import (
    SCOPE_WORDS,
    Roles,
    Sel,
    cond_eq,
    human,
    lit,
    num,
    present,
    show,
)
from clarisql.envs.synth.types import DIFFICULTIES, ColumnProfile, Draft

if TYPE_CHECKING:
    from clarisql.envs.synth.drafting import DraftContext, Maker


def scope_of(c: ColumnProfile, v: Any) -> tuple[str, str, Any] | None:
    """A filter on a scoping dimension (year, region, category...) as a ``scope`` slot."""
    return (c.table, c.name, v) if SCOPE_WORDS.search(c.name) or c.kind == "text" else None


def shown(r: Roles) -> ColumnProfile | None:
    """The column that names a row in answers: a label unique on the data, else a key, else a
    label (rows a listed answer cannot tell apart, "Sidney" seven times, teach nothing), else
    None."""
    labels = sorted(r.labels, key=lambda c: not {"name", "title"} & set(split_name(c.name)))
    unique = [c for c in (*labels, *r.keys) if c.unique]  # (a name or title first: not a code)
    return (unique or labels or r.keys or [None])[0]


def named_by(r: Roles) -> list[ColumnProfile]:
    """The columns a listing of ``r``'s rows shows: :func:`shown`, and beside a key (a
    surrogate number no user asks for alone: "What invoice ID do the invoices ... have?") a
    label that says what the row is (a name before another label), else a date; only the key
    when the table has neither."""
    lab = shown(r)
    if lab is None or lab in r.labels:
        return [lab] if lab is not None else []
    said = sorted(
        (c for c in r.labels if c.name != lab.name), key=lambda c: "name" not in split_name(c.name)
    ) + [c for c in r.dates if c.name != lab.name]
    return [lab, said[0]] if said else [lab]


# --- single-table makers ----------------------------------------------------------------------
def single_makers(cx: DraftContext) -> dict[str, list[Maker]]:
    out: dict[str, list[Maker]] = {d: [] for d in DIFFICULTIES}
    for name in sorted(cx.roles):
        if not cx.lake.is_subject(name):
            continue  # (a link or mirror table: lake.non_subjects)
        r = cx.roles[name]
        lab = shown(r)
        if lab and r.dims:
            out["simple"].append(lambda r=r, lab=lab: _list_eq(cx, r, lab))
        if lab and r.measures:
            out["simple"].append(lambda r=r, lab=lab: _list_gt(cx, r, lab))
            out["moderate"].append(lambda r=r, lab=lab: _topk(cx, r, lab))
        if any(c.unique for c in r.labels) and r.measures:
            out["simple"].append(lambda r=r: _lookup(cx, r))
        if r.dims:
            out["moderate"].append(lambda r=r: _count_eq(cx, r))
            out["moderate"].append(lambda r=r: _count_group(cx, r))
            out["challenging"].append(lambda r=r: _share(cx, r))
        if r.dims and r.measures:
            out["moderate"].append(lambda r=r: _agg_eq(cx, r))
            out["moderate"].append(lambda r=r: _agg_group(cx, r))
            out["challenging"].append(lambda r=r: _having(cx, r))
            if lab:
                out["challenging"].append(lambda r=r, lab=lab: _above_avg(cx, r, lab))
                out["challenging"].append(lambda r=r, lab=lab: _rank(cx, r, lab))
        if r.dates:
            out["moderate"].append(lambda r=r: _per_year(cx, r))
    return out


def _t(r: Roles) -> str:
    return human(r.table.name)


def _rows(r: Roles) -> str:
    """The table's rows as a plural noun (``film`` -> ``films``, ``months`` stays): a user asks
    "how many films", not "how many film rows"."""
    return rows_noun(_t(r))


def _row(r: Roles) -> str:
    """One row of the table as a countable noun (``inventory`` -> ``inventory item``)."""
    return row_noun(_t(r))


def _said(r: Roles, c: ColumnProfile) -> str:
    """A column of ``r``'s rows in words without the rows' own noun that a user leaves out
    (:func:`~.phrasing.attr_words`: the ``product price`` of a product is its ``price``)."""
    return attr_words(human(c.name), _row(r))


def _labs(r: Roles, cols: list[ColumnProfile]) -> str:
    """The naming columns of a listing in words, each with its article after the first
    ("track ID, the name"), so that "Give the {labs} and the {measure}" reads."""
    return ", the ".join(_said(r, c) for c in cols)


def _list_eq(cx: DraftContext, r: Roles, lab: ColumnProfile) -> Draft | None:
    cols = named_by(r)
    if cols == [lab] and lab not in r.labels:
        return None  # a bare list of the rows' own keys: no user asks for one
    d = cx.pick([c for c in r.dims if c not in cols] or r.dims)
    v = cx.value(d, cx.v.max_rows)
    if v is None:
        return None
    sel = Sel(*(c.ref() for c in cols)).frm(r.table.name).where(cond_eq(d, v))
    got = cx.v.rows(sel.sql())
    if got and len({tuple(x) for x in got}) < len(got):
        return None  # rows the answer cannot tell apart ("Sidney" seven times)
    subj = _row(r)
    q = pick(
        ATTR_WHERE if len(cols) == 1 else ROWS_WHERE,
        cx.rng,
        attr=_said(r, lab),
        attrs=and_list([_said(r, c) for c in cols]),
        subj=subj,
        subjs=plural(subj),
        key=key_words(human(d.name), subj),
        v=quote(v),
    )
    f = [(d.table, d.name, "=", v)]
    return cx.draft(
        sel, q, "simple", "single", [*cols, d], ("filter",), filters=f, scope=scope_of(d, v)
    )


def _list_gt(cx: DraftContext, r: Roles, lab: ColumnProfile) -> Draft | None:
    m = cx.pick(r.measures)
    x = cx.threshold(r.table.name, m)
    if x is None:
        return None
    cols = named_by(r)
    sel = (
        Sel(*(c.ref() for c in cols), num(m))
        .frm(r.table.name)
        .where(present(m), f"{num(m)} > {lit(x)}")
    )
    q = pick(
        ABOVE,
        cx.rng,
        rows=_rows(r),
        row=_row(r),
        m=_said(r, m),
        x=show(x),
        lab=_labs(r, cols),
    )
    f = [(m.table, m.name, ">", x)]
    return cx.draft(
        sel, q, "simple", "single", [*cols, m], ("filter",), measure=(m.table, m.name), filters=f
    )


def _lookup(cx: DraftContext, r: Roles) -> Draft | None:
    lab, m = cx.pick([c for c in r.labels if c.unique]), cx.pick(r.measures)
    v = cx.value(lab)
    sel = Sel(num(m)).frm(r.table.name).where(cond_eq(lab, v), present(m))
    # the frames of the unanswerable twin (layers.unanswerable): only the attribute differs
    q = pick(
        ATTR_OF_RECORD,
        cx.rng,
        attr=_said(r, m),
        subj=_row(r),
        key=key_words(human(lab.name), _row(r)),
        v=quote(v),
    )
    f = [(lab.table, lab.name, "=", v)]
    return cx.draft(
        sel, q, "simple", "single", [m, lab], ("filter",), measure=(m.table, m.name), filters=f
    )


def _ask(agg: str, m: ColumnProfile) -> str:
    """``the average unit price`` (as the underspecified aggregates say it)."""
    return agg_words(agg, human(m.name))


def _filter(cx: DraftContext, d: ColumnProfile, v: Any) -> str:
    """One equality filter in one of the shared phrasings (:data:`~.phrasing.FILTER`)."""
    return pick(FILTER, cx.rng, col=human(d.name), v=quote(v))


def _agg(cx: DraftContext, m: ColumnProfile) -> str:
    return cx.pick(agg_names(m))


def _agg_eq(cx: DraftContext, r: Roles) -> Draft | None:
    d, m = cx.pick(r.dims), cx.pick(r.measures)
    agg = _agg(cx, m)
    v = cx.value(d)
    sel = Sel(f"{agg.upper()}({num(m)})").frm(r.table.name).where(cond_eq(d, v), present(m))
    q = pick(AGGREGATE, cx.rng, ask=_ask(agg, m), subj=f"the {_rows(r)}", f=_filter(cx, d, v))
    return cx.draft(
        sel,
        q,
        "moderate",
        "single",
        [m, d],
        ("filter", "aggregate", agg),
        measure=(m.table, m.name),
        agg=agg,
        filters=[(d.table, d.name, "=", v)],
        scope=scope_of(d, v),
    )


def _agg_group(cx: DraftContext, r: Roles) -> Draft | None:
    d, m = cx.pick(r.dims), cx.pick(r.measures)
    agg = _agg(cx, m)
    nc, ph, nf = cx.narrow(r, (d.name,))
    sel = (
        Sel(d.ref(), f"{agg.upper()}({num(m)})")
        .frm(r.table.name)
        .where(present(m), present(d), *nc)
        .group(d.ref())
    )
    q = pick(PER_GROUP, cx.rng, d=human(d.name), ask=_ask(agg, m), subj=f"the {_rows(r)}", f=ph)
    return cx.draft(
        sel,
        q,
        "moderate",
        "single",
        [d, m],
        ("group", "aggregate", agg),
        measure=(m.table, m.name),
        agg=agg,
        group_by=(d.table, d.name),
        filters=nf or None,
    )


def _count_eq(cx: DraftContext, r: Roles) -> Draft | None:
    d = cx.pick(r.dims)
    v = cx.value(d)
    sel = Sel("COUNT(*)").frm(r.table.name).where(cond_eq(d, v))
    q = pick(COUNT, cx.rng, rows=_rows(r), f=_filter(cx, d, v))
    return cx.draft(
        sel,
        q,
        "moderate",
        "single",
        [d],
        ("filter", "aggregate", "count"),
        agg="count",
        filters=[(d.table, d.name, "=", v)],
        scope=scope_of(d, v),
    )


def _count_group(cx: DraftContext, r: Roles) -> Draft | None:
    d = cx.pick(r.dims)
    nc, ph, nf = cx.narrow(r, (d.name,))
    sel = Sel(d.ref(), "COUNT(*)").frm(r.table.name).where(present(d), *nc).group(d.ref())
    q = pick(COUNT_PER_GROUP, cx.rng, rows=_rows(r), f=ph, d=human(d.name))
    return cx.draft(
        sel,
        q,
        "moderate",
        "single",
        [d],
        ("group", "aggregate", "count"),
        agg="count",
        group_by=(d.table, d.name),
        filters=nf or None,
    )


def _topk(cx: DraftContext, r: Roles, lab: ColumnProfile) -> Draft | None:
    m, k = cx.pick(r.measures), cx.rng.randint(3, 10)
    hi = cx.rng.random() < 0.5
    way = "DESC" if hi else "ASC"
    nc, ph, nf = cx.narrow(r, ())
    cols = named_by(r)
    sel = (
        Sel(*(c.ref() for c in cols), num(m))
        .frm(r.table.name)
        .where(present(m), *nc)
        .order(f"{num(m)} {way}", f"{lab.ref()} ASC")
        .limit(k)
    )
    word = "highest" if hi else "lowest"
    q = pick(
        RANKING,
        cx.rng,
        k=k,
        rows=_rows(r),
        f=ph,
        word=word,
        m=_said(r, m),
        lab=_labs(r, cols),
        tie=_said(r, lab),
    )
    return cx.draft(
        sel,
        q,
        "moderate",
        "single",
        [*cols, m],
        ("order", "limit"),
        ordered=True,
        measure=(m.table, m.name),
        filters=nf or None,
    )


def _per_year(cx: DraftContext, r: Roles) -> Draft | None:
    d = cx.pick(r.dates)
    year = f"SUBSTR({d.ref()}, 1, 4)"
    nc, ph, nf = cx.narrow(r, (d.name,))
    sel = (
        Sel(f"{year} AS year", "COUNT(*)")
        .frm(r.table.name)
        .where(present(d), *nc)
        .group("year")
        .order("year ASC")
    )
    q = f"How many {_rows(r)}{ph} are there per year of {human(d.name)}, in chronological order?"
    return cx.draft(
        sel,
        q,
        "moderate",
        "single",
        [d],
        ("cast", "group", "count", "order"),
        ordered=True,
        group_by=(d.table, d.name),
        filters=nf or None,
    )


def _above_avg(cx: DraftContext, r: Roles, lab: ColumnProfile) -> Draft | None:
    d, m = cx.pick(r.dims), cx.pick(r.measures)
    v = cx.value(d, 2 * cx.v.max_rows)
    if v is None:
        return None
    inner = Sel(f"AVG({num(m)})").frm(r.table.name).where(cond_eq(d, v), present(m)).sql()
    cols = named_by(r)
    sel = (
        Sel(*(c.ref() for c in cols), num(m))
        .frm(r.table.name)
        .where(cond_eq(d, v), present(m), f"{num(m)} > ({inner})")
    )
    q = (
        f"Among {_rows(r)} with {human(d.name)} {show(v)}, which have {_said(r, m)} above "
        f"their average? Give the {_labs(r, cols)} and the {_said(r, m)}."
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "single",
        [lab, m, d],
        ("filter", "subquery", "avg"),
        measure=(m.table, m.name),
        agg="avg",
        filters=[(d.table, d.name, "=", v)],
        scope=scope_of(d, v),
    )


#: a per-group "highest" needs a measure that rarely ties (a rental duration of 3..7 days would
#: list a third of the table as "all ties")
MIN_RANK_DISTINCT = 20


def _rank(cx: DraftContext, r: Roles, lab: ColumnProfile) -> Draft | None:
    fine = [m for m in r.measures if m.distinct >= MIN_RANK_DISTINCT]
    if not fine:
        return None
    d, m = cx.pick(r.dims), cx.pick(fine)
    nc, ph, nf = cx.narrow(r, (d.name,))
    inner = (
        Sel(
            f"{d.ref()} AS grp",
            f"{lab.ref()} AS item",
            f"{num(m)} AS val",
            f"RANK() OVER (PARTITION BY {d.ref()} ORDER BY {num(m)} DESC) AS rnk",
        )
        .frm(r.table.name)
        .where(present(m), present(d), *nc)
    )
    sel = Sel("grp", "item", "val").frm(inner.sub("ranked")).where("rnk = 1")
    q = (
        f"For each {human(d.name)}, which {_row(r)}{ph} has the highest {_said(r, m)}? "
        f"Give the {human(d.name)}, the {_said(r, lab)} and the {_said(r, m)} (all ties)."
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "single",
        [d, lab, m],
        ("window", "rank", "subquery"),
        measure=(m.table, m.name),
        agg="max",
        group_by=(d.table, d.name),
        filters=nf or None,
    )


def _share(cx: DraftContext, r: Roles) -> Draft | None:
    d = cx.pick(r.dims)
    nc, ph, nf = cx.narrow(r, (d.name,))
    share = "ROUND(100.0 * COUNT(*) / SUM(COUNT(*)) OVER (), 2)"
    sel = Sel(d.ref(), f"{share} AS share").frm(r.table.name).where(present(d), *nc).group(d.ref())
    q = (
        f"What share of {_rows(r)}{ph} (in percent, rounded to 2 decimals) does each "
        f"{human(d.name)} account for?"
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "single",
        [d],
        ("group", "count", "window"),
        agg="count",
        group_by=(d.table, d.name),
        filters=nf or None,
    )


def _having(cx: DraftContext, r: Roles) -> Draft | None:
    d, m = cx.pick(r.dims), cx.pick(r.measures)
    nc, ph, nf = cx.narrow(r, (d.name,))
    overall = Sel(f"AVG({num(m)})").frm(r.table.name).where(present(m), *nc).sql()
    sel = (
        Sel(d.ref(), f"AVG({num(m)})")
        .frm(r.table.name)
        .where(present(m), present(d), *nc)
        .group(d.ref())
        .having(f"AVG({num(m)}) > ({overall})")
    )
    q = (
        f"Which {plural(human(d.name))} have an average {_said(r, m)} above the average over "
        f"all {_rows(r)}{ph}? Give each with its average."
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "single",
        [d, m],
        ("group", "having", "subquery", "avg"),
        measure=(m.table, m.name),
        agg="avg",
        group_by=(d.table, d.name),
        filters=nf or None,
    )


__all__ = ["named_by", "scope_of", "shown", "single_makers"]
