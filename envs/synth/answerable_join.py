"""Join and union templates of :mod:`.answerable` (over discovered pairs).

Join drafts follow a discovered pair ``left.fk -> right.key`` and describe the right-hand rows by
a label or dimension of the right table; union drafts stack the two tables of a discovered union
pair over their mapped columns (``UNION`` for distinct lists, ``UNION ALL`` under aggregates).
The contract is :mod:`.answerable`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clarisql.envs.synth.column_roles import agg_names, column_role
from clarisql.envs.synth.names import entity_kind, split_name
from clarisql.envs.synth.phrasing import (
    JOIN_LIST,
    JOIN_LIST_OWN,
    JOIN_ROWS,
    agg_words,
    and_list,
    key_words,
    pick,
    plural,
    rows_noun,
    singular,
)
from clarisql.envs.synth.templates import (
    AGG_WORDS,
    LARGE_TABLE,
    Roles,
    Sel,
    cond_eq,
    human,
    num,
    present,
    show,
    union_all,
    union_sql,
)
from clarisql.envs.synth.types import ColumnProfile, Draft, JoinPair, UnionPair, join_on

if TYPE_CHECKING:
    from clarisql.envs.synth.drafting import DraftContext, Maker


# --- joins --------------------------------------------------------------------------------------
def _describers(r: Roles, key: ColumnProfile) -> list[ColumnProfile]:
    return [c for c in (*r.labels, *r.dims) if c.name != key.name]


def join_makers(cx: DraftContext) -> dict[str, list[Maker]]:
    out: dict[str, list[Maker]] = {"simple": [], "moderate": [], "challenging": []}
    for j in cx.lake.joins:
        if not (cx.lake.is_subject(j.left[0]) and cx.lake.is_subject(j.right[0])):
            continue  # both tables are named in the question: no link or mirror table
        lt, rt = cx.lake.table(j.left[0]), cx.lake.table(j.right[0])
        fk, key = lt.column(j.left[1]), rt.column(j.right[1])
        rl, rr = cx.roles[lt.name], cx.roles[rt.name]
        desc = _describers(rr, key)
        if not desc:
            continue
        # what is listed names the linked rows: a label or their own key, never a reference to
        # a third table ("the staff IDs of their rentals": ids shared by many rows)
        # a name where the rows have one, else a unique value a user can say (a date, a code)
        shown = [c for c in rl.labels if c.name != fk.name] or [
            k
            for k in rl.keys
            if k.unique and k.name != fk.name and column_role(k) in ("date", "code", "name")
        ]
        if shown:
            out["simple"].append(
                lambda j=j, fk=fk, key=key, desc=desc, shown=shown: _j_list(
                    cx, j, fk, key, desc, shown
                )
            )
        else:  # else their own key, never alone: beside a date that says which row it is
            own = [k for k in rl.keys if k.unique and k.name != fk.name]
            dates = [c for c in rl.dates if c.name not in (fk.name, own[0].name if own else "")]
            if own and dates:
                out["simple"].append(
                    lambda j=j, fk=fk, key=key, desc=desc, k=own[0], dates=dates: _j_rows(
                        cx, j, fk, key, desc, k, dates
                    )
                )
        small = [c for c in desc if c in rr.dims]
        if small:
            out["moderate"].append(
                lambda j=j, fk=fk, key=key, small=small: _j_count(cx, j, fk, key, small)
            )
        if small and rl.measures:
            out["moderate"].append(
                lambda j=j, fk=fk, key=key, small=small, rl=rl: _j_agg(cx, j, fk, key, small, rl)
            )
        # rows listed by these two are named by what identifies them (a label of the
        # referenced table, else its key), never by a shared attribute ("their active": Y)
        labels = [c for c in rr.labels if c.name != key.name]
        named = [c for c in labels if "name" in split_name(c.name)]  # a name before an address
        ident = named or labels or [key]
        out["challenging"].append(
            lambda j=j, fk=fk, key=key, ident=ident: _j_rank(cx, j, fk, key, ident)
        )
        out["challenging"].append(
            lambda j=j, fk=fk, key=key, ident=ident: _j_above(cx, j, fk, key, ident)
        )
    return out


def _on(fk: ColumnProfile, key: ColumnProfile) -> str:
    return join_on((fk.table, fk.name), (key.table, key.name))


def _names(j: JoinPair) -> tuple[str, str]:
    """The two tables' rows as plural nouns (``engagements``, ``customers``)."""
    return rows_noun(human(j.left[0])), rows_noun(human(j.right[0]))


def _names_one(cx: DraftContext, d: ColumnProfile, v: Any) -> bool:
    """Whether the condition ``d = v`` picks one record: ``d`` is unique, or one row holds
    ``v`` (a phone number some customers lack is no key, yet names one customer)."""
    return d.unique or cx.counts(d).get(v, 0) == 1


def _one(frames: tuple[str, ...], table: str = "") -> tuple[str, ...]:
    """``frames`` about one record (the condition is on a unique column): "the country whose
    name is ...", never "the countries whose name is ..."; "its tracks" of a thing, "their
    orders" of a person (:func:`~.names.entity_kind` of ``table``)."""
    pron = "their" if table and entity_kind(table) == "person" else "its"
    return tuple(
        f.replace("{subjs}", "{subj}")
        .replace(" do the {subj} ", " does the {subj} ")
        .replace("their {rows}", f"{pron} {{rows}}")
        .replace("their different", f"{pron} different")
        for f in frames
    )


def _j_list(cx: DraftContext, j: JoinPair, fk, key, desc, shown) -> Draft | None:
    d, s = cx.pick(desc), cx.pick(shown)
    v = cx.value(d)
    if v is None:
        return None
    sel = (
        Sel(s.ref(), distinct=True).frm(fk.table).join(key.table, _on(fk, key)).where(cond_eq(d, v))
    )
    ln, rn = _names(j)
    attr = human(s.name)
    one = _names_one(cx, d, v)
    frames = _one(JOIN_LIST, d.table) if one else JOIN_LIST  # (one album: "the album whose")
    if singular(attr).lower() == singular(ln).lower():  # "the addresses of the addresses"
        frames = _one(JOIN_LIST_OWN, d.table) if one else JOIN_LIST_OWN
    q = pick(
        frames,
        cx.rng,
        attrs=plural(attr),
        rows=ln,
        subj=singular(rn),
        subjs=rn,
        key=key_words(human(d.name), singular(rn)),
        v=show(v),
    )
    return cx.draft(
        sel,
        q,
        "simple",
        "join",
        [s, fk, key, d],
        ("join", "filter", "distinct"),
        filters=[(d.table, d.name, "=", v)],
        join=(j.left, j.right),
    )


def _j_rows(cx: DraftContext, j: JoinPair, fk, key, desc, k, dates) -> Draft | None:
    """The linked rows that have no name, each by its own key and a date ("the rentals of the
    customers whose last name is "ALLEN": their rental ID and rental date")."""
    d, t = cx.pick(desc), cx.pick(dates)
    v = cx.value(d)
    if v is None:
        return None
    sel = Sel(k.ref(), t.ref()).frm(fk.table).join(key.table, _on(fk, key)).where(cond_eq(d, v))
    ln, rn = _names(j)
    q = pick(
        _one(JOIN_ROWS, d.table) if _names_one(cx, d, v) else JOIN_ROWS,
        cx.rng,
        attrs=and_list([human(k.name), human(t.name)]),
        rows=ln,
        subj=singular(rn),
        subjs=rn,
        key=key_words(human(d.name), singular(rn)),
        v=show(v),
    )
    return cx.draft(
        sel,
        q,
        "simple",
        "join",
        [k, t, fk, key, d],
        ("join", "filter"),
        filters=[(d.table, d.name, "=", v)],
        join=(j.left, j.right),
    )


def _j_count(cx: DraftContext, j: JoinPair, fk, key, small) -> Draft | None:
    d = cx.pick(small)
    nc, ph, nf = cx.narrow(cx.roles[fk.table], ())
    sel = (
        Sel(d.ref(), "COUNT(*)")
        .frm(fk.table)
        .join(key.table, _on(fk, key))
        .where(present(d), *nc)
        .group(d.ref())
    )
    ln, rn = _names(j)
    q = f"How many {ln}{ph} are there for each {human(d.name)} of their {rn}?"
    return cx.draft(
        sel,
        q,
        "moderate",
        "join",
        [fk, key, d],
        ("join", "group", "aggregate", "count"),
        agg="count",
        group_by=(d.table, d.name),
        join=(j.left, j.right),
        filters=nf or None,
    )


def _j_agg(cx: DraftContext, j: JoinPair, fk, key, small, rl: Roles) -> Draft | None:
    d, m = cx.pick(small), cx.pick(rl.measures)
    agg = cx.pick(agg_names(m))
    nc, ph, nf = cx.narrow(rl, ())
    sel = (
        Sel(d.ref(), f"{agg.upper()}({num(m)})")
        .frm(fk.table)
        .join(key.table, _on(fk, key))
        .where(present(d), present(m), *nc)
        .group(d.ref())
    )
    ln, rn = _names(j)
    q = f"For each {human(d.name)} of the {rn}, what is {agg_words(agg, human(m.name))} of their {ln}{ph}?"
    return cx.draft(
        sel,
        q,
        "moderate",
        "join",
        [fk, key, d, m],
        ("join", "group", "aggregate", agg),
        measure=(m.table, m.name),
        agg=agg,
        group_by=(d.table, d.name),
        join=(j.left, j.right),
        filters=nf or None,
    )


#: a ranking of the referenced rows by their number of linked rows needs at least this many
#: referenced rows that have links (the 2 addresses of 2 stores, 1 store each, rank nothing)
MIN_RANKED = 5


def _j_rank(cx: DraftContext, j: JoinPair, fk, key, desc) -> Draft | None:
    if fk.distinct < MIN_RANKED:
        return None
    d, k = cx.pick(desc), cx.rng.randint(1, 3)
    nc, ph, nf = cx.narrow(cx.roles[fk.table], ())
    # a describing column two rows share (a first name) cannot tell them apart: the key is listed
    ident = [] if d.unique else [f"{key.ref()} AS id"]
    inner = (
        Sel(
            *ident,
            f"{d.ref()} AS item",
            "COUNT(*) AS n",
            "DENSE_RANK() OVER (ORDER BY COUNT(*) DESC) AS rk",
        )
        .frm(fk.table)
        .join(key.table, _on(fk, key))
        .where(present(d), *nc)
        .group(key.ref(), d.ref())
    )
    sel = Sel(*(["id"] if ident else []), "item", "n").frm(inner.sub("ranked")).where(f"rk <= {k}")
    ln, rn = _names(j)
    top = "the most" if k == 1 else f"one of the {k} largest numbers of"
    said = f"{human(key.name)}, {human(d.name)}" if ident else human(d.name)
    q = f"Which {rn} have {top} {ln}{ph}? Give their {said} and the number of {ln} (all ties)."
    return cx.draft(
        sel,
        q,
        "challenging",
        "join",
        [fk, key, d],
        ("join", "group", "count", "window", "subquery"),
        agg="count",
        group_by=(d.table, d.name),
        join=(j.left, j.right),
        filters=nf or None,
        ranked=Sel("COUNT(*)").frm(inner.sub("ranked")).sql(),
    )


def _j_above(cx: DraftContext, j: JoinPair, fk, key, desc) -> Draft | None:
    d = cx.pick(desc)
    nc, ph, nf = cx.narrow(cx.roles[fk.table], ())
    per = Sel("COUNT(*) AS c").frm(fk.table).where(f"{fk.ref()} IS NOT NULL", *nc).group(fk.ref())
    avg = Sel("AVG(c)").frm(per.sub("per_key")).sql()
    sel = (
        Sel(f"{d.ref()}", "COUNT(*)")
        .frm(fk.table)
        .join(key.table, _on(fk, key))
        .where(*nc)
        .group(key.ref(), d.ref())
        .having(f"COUNT(*) > 2 * ({avg})")
    )
    ln, rn = _names(j)
    q = (
        f"Which {rn} have more than twice the average number of {ln}{ph} per {singular(rn)}? "
        f"Give their {human(d.name)} and their number of {ln}."
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "join",
        [fk, key, d],
        ("join", "group", "having", "subquery", "avg"),
        agg="count",
        join=(j.left, j.right),
        filters=nf or None,
    )


# --- unions -------------------------------------------------------------------------------------
def _mapped(
    cx: DraftContext, u: UnionPair, cols: list[ColumnProfile]
) -> list[tuple[ColumnProfile, ColumnProfile]]:
    b = cx.lake.table(u.right)
    m = dict(u.column_map)
    return [(c, b.column(m[c.name])) for c in cols if c.name in m]


def union_makers(cx: DraftContext) -> dict[str, list[Maker]]:
    out: dict[str, list[Maker]] = {"simple": [], "moderate": [], "challenging": []}
    for u in cx.lake.unions:
        if not (cx.lake.is_subject(u.left) and cx.lake.is_subject(u.right)):
            continue
        ra = cx.roles[u.left]
        dims, meas = _mapped(cx, u, ra.dims), _mapped(cx, u, ra.measures)
        # rows are named by a label, a key, or else the most varied dimension (``store``)
        namers = ra.labels or ra.keys or sorted(ra.dims, key=lambda c: (-c.distinct, c.name))[:1]
        labs = _mapped(cx, u, namers)
        if dims and labs:
            out["simple"].append(lambda u=u, dims=dims, labs=labs: _u_list(cx, u, dims, labs))
        if dims:
            out["moderate"].append(lambda u=u, dims=dims: _u_count(cx, u, dims))
        if dims and meas:
            out["moderate"].append(lambda u=u, dims=dims, meas=meas: _u_agg(cx, u, dims, meas))
        if labs and meas:
            out["challenging"].append(lambda u=u, labs=labs, meas=meas: _u_top(cx, u, labs, meas))
        if labs and meas and dims:
            out["challenging"].append(
                lambda u=u, labs=labs, meas=meas, dims=dims: _u_above(cx, u, labs, meas, dims)
            )
    return out


def _un(u: UnionPair) -> str:
    return f"{human(u.left)} and {human(u.right)}"


def _cols(*pairs: tuple[ColumnProfile, ColumnProfile]) -> list[ColumnProfile]:
    return [c for p in pairs for c in p]


def _u_list(cx: DraftContext, u: UnionPair, dims, labs) -> Draft | None:
    lab = cx.pick(labs)
    dims = [d for d in dims if d[0].name != lab[0].name]
    if not dims:
        return None
    d = cx.pick(dims)
    v: Any = cx.value(d[0], cx.v.max_rows)
    if v is None:
        return None
    a = Sel(lab[0].ref()).frm(u.left).where(cond_eq(d[0], v))
    b = Sel(lab[1].ref()).frm(u.right).where(cond_eq(d[1], v))
    q = f"List the different {plural(human(lab[0].name))} with {human(d[0].name)} {show(v)} across {_un(u)}."
    return cx.draft(
        union_sql(a, b),
        q,
        "simple",
        "union",
        _cols(d, lab),
        ("union", "filter", "distinct"),
        filters=[(u.left, d[0].name, "=", v), (u.right, d[1].name, "=", v)],
        union=(u.left, u.right),
    )


def _u_count(cx: DraftContext, u: UnionPair, dims) -> Draft | None:
    d = cx.pick(dims)
    v: Any = cx.value(d[0])
    a = Sel(f"{d[0].ref()} AS grp").frm(u.left).where(cond_eq(d[0], v))
    b = Sel(f"{d[1].ref()} AS grp").frm(u.right).where(cond_eq(d[1], v))
    sel = Sel("COUNT(*)").frm(union_all(a, b))
    q = f"How many rows of {_un(u)} together have {human(d[0].name)} {show(v)}?"
    return cx.draft(
        sel,
        q,
        "moderate",
        "union",
        list(d),
        ("union", "filter", "aggregate", "count"),
        agg="count",
        filters=[(u.left, d[0].name, "=", v)],
        scope=(u.left, d[0].name, v),
        union=(u.left, u.right),
    )


def _narrow_union(
    cx: DraftContext, u: UnionPair, dims, d
) -> tuple[list[str], list[str], str, list]:
    """:meth:`DraftContext.narrow` for both tables of a union pair (same values on both)."""
    others = [x for x in dims if x[0].name != d[0].name]
    big = cx.lake.table(u.left).rows + cx.lake.table(u.right).rows
    if big < LARGE_TABLE or not others:
        return [], [], "", []
    x = cx.pick(others)
    v = cx.value(x[0])
    f = [(u.left, x[0].name, "=", v), (u.right, x[1].name, "=", v)]
    return [cond_eq(x[0], v)], [cond_eq(x[1], v)], f" (rows with {human(x[0].name)} {show(v)})", f


def _u_agg(cx: DraftContext, u: UnionPair, dims, meas) -> Draft | None:
    d, m = cx.pick(dims), cx.pick(meas)
    agg = cx.pick(agg_names(m[0]))
    na, nb, ph, nf = _narrow_union(cx, u, dims, d)
    a = (
        Sel(f"{d[0].ref()} AS grp", f"{num(m[0])} AS val")
        .frm(u.left)
        .where(present(m[0]), present(d[0]), *na)
    )
    b = (
        Sel(f"{d[1].ref()} AS grp", f"{num(m[1])} AS val")
        .frm(u.right)
        .where(present(m[1]), present(d[1]), *nb)
    )
    sel = Sel("grp", f"{agg.upper()}(val)").frm(union_all(a, b)).group("grp")
    q = f"Over {_un(u)} together{ph}, what is the {AGG_WORDS[agg]} {human(m[0].name)} for each {human(d[0].name)}?"
    return cx.draft(
        sel,
        q,
        "moderate",
        "union",
        _cols(d, m),
        ("union", "group", "aggregate", agg),
        measure=(u.left, m[0].name),
        agg=agg,
        group_by=(u.left, d[0].name),
        union=(u.left, u.right),
        filters=nf or None,
    )


def _u_top(cx: DraftContext, u: UnionPair, labs, meas) -> Draft | None:
    lab, m, k = cx.pick(labs), cx.pick(meas), cx.rng.randint(3, 8)
    a = Sel(f"{lab[0].ref()} AS item", f"{num(m[0])} AS val").frm(u.left).where(present(m[0]))
    b = Sel(f"{lab[1].ref()} AS item", f"{num(m[1])} AS val").frm(u.right).where(present(m[1]))
    sel = Sel("item", "val").frm(union_all(a, b)).order("val DESC", "item ASC").limit(k)
    q = (
        f"Across {_un(u)}, list the {k} rows with the highest {human(m[0].name)}, highest first "
        f"(ties by {human(lab[0].name)}): their {human(lab[0].name)} and {human(m[0].name)}."
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "union",
        _cols(lab, m),
        ("union", "subquery", "order", "limit"),
        ordered=True,
        measure=(u.left, m[0].name),
        union=(u.left, u.right),
    )


def _u_above(cx: DraftContext, u: UnionPair, labs, meas, dims) -> Draft | None:
    lab, m = cx.pick(labs), cx.pick(meas)
    dims = [d for d in dims if d[0].name != lab[0].name]
    if not dims:
        return None
    d = cx.pick(dims)
    v: Any = cx.value(d[0], cx.v.max_rows)
    if v is None:
        return None
    a = (
        Sel(f"{lab[0].ref()} AS item", f"{num(m[0])} AS val")
        .frm(u.left)
        .where(present(m[0]), cond_eq(d[0], v))
    )
    b = (
        Sel(f"{lab[1].ref()} AS item", f"{num(m[1])} AS val")
        .frm(u.right)
        .where(present(m[1]), cond_eq(d[1], v))
    )
    avg = Sel("AVG(val)").frm(union_all(a, b, "all_rows")).sql()
    sel = Sel("item", "val").frm(union_all(a, b)).where(f"val > ({avg})")
    q = (
        f"Across {_un(u)}, which rows with {human(d[0].name)} {show(v)} have a {human(m[0].name)} "
        f"above the average of those rows? Give their {human(lab[0].name)} and {human(m[0].name)}."
    )
    return cx.draft(
        sel,
        q,
        "challenging",
        "union",
        _cols(lab, m, d),
        ("union", "filter", "subquery", "avg"),
        measure=(u.left, m[0].name),
        agg="avg",
        filters=[(u.left, d[0].name, "=", v)],
        scope=(u.left, d[0].name, v),
        union=(u.left, u.right),
    )


__all__ = ["join_makers", "union_makers"]
