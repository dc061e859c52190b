"""Machine-checkable flaws of a synthesized suite, per task, and a stratified sheet for people.

Contract
- :func:`audit_tasks` reads each task against its database and returns an :class:`AuditReport`:
  flaw -> category -> count, the tasks per category, and examples. The flaws (:data:`FLAWS`):
  - ``join-path-disagreement``: a join of the gold whose ON pair is not a key (neither side
    unique), or for which another key path between the same two tables (a unique referenced
    column whose name agrees, :func:`~.discover.name_similarity` >= 0.8, or a declared foreign
    key, containing >= 80 % of the values) gives a different answer;
  - ``aggregate-over-non-measure``: SUM/AVG/MAX/MIN over a column whose role
    (:func:`~.column_roles.column_role`) is an identifier, code, coordinate, clock time, flag or
    rank, SUM/AVG over a date part, or SUM over an intensive measure (a rate, price, share:
    :func:`~.column_roles.summable`);
  - ``group-by-aggregated-column``: a column both grouped by and aggregated in one SELECT;
  - ``unanswerable-with-matching-column``: an unanswerable task whose requested attribute some
    column may hold (:func:`~.layers.unanswerable.absent`, with the embedder when given), or
    whose head noun is a column's head noun in a table the asked table reaches by joins (for
    column-surface, other than other people's tables: :meth:`~.layers.unanswerable._UnansGen.
    other_people`);
  - ``typo-with-unique-nearest-value``: a misspelled or partial value (``not-exist`` /
    ``Error`` labels) for which exactly one value of the label's column starts with it or lies
    within two edits of it: an agent resolves it without asking;
  - ``raw-column-token``: the question holds a raw identifier (``points_max``, ``playerID``) or
    a name that cannot be put in words (``G``) outside quotes;
  - ``listed-answer-without-identifier``: a plain listing (no DISTINCT, GROUP BY or aggregate)
    whose rows repeat ("Sidney" seven times: an address or city is no identifier), or an
    answer of several rows and columns none of which says which row it is (an identifier,
    code, name or the group key);
  - ``list-column-as-category``: a column of joined items (``Trailers,Behind the Scenes``,
    role ``list``, or values that read as credits, :func:`credit_list`: ``Bill Gould/Mike
    Bordin/Mike Patton``) grouped by or compared with ``=`` as if each value were one category
    (unless the column is unique: an artist's own name), or a name clarification whose gold is
    one whole member list;
  - ``write-row-not-identified``: a well-specified update or delete (or one whose only label is
    a misspelled name) that picks its rows by a column not unique on the data (``WHERE
    birth_city = 'Big River'`` changes every person born there);
  - ``which-table-given-away``: a "which table?" insert (a ``Missing`` label on ``table``) that
    states a value found only in the gold table of its family, or a number/date inside that
    table's range and outside every other's (:func:`~.layers.writes.reveals_table`);
  - ``helper-table-subject``: a task whose gold, literal reading, tables or requested attribute
    is about a helper table (a calendar or number sequence,
    :func:`~.discover.helper_tables`; the lake's ``helpers``);
  - ``swap-between-unrelated-rows``: a write of two UPDATEs that exchange one column's values
    between two rows that share no parent reference or category value, or that exchange a
    measure (two tracks' sizes);
  - ``bulk-update-to-one-value``: an UPDATE that sets a measure to one literal number over rows
    not picked by a unique column ("change the total of all its invoices below 1.98 to 1.43");
  - ``write-breaks-derived-total``: an UPDATE of a column that is a total over other rows, or
    one of its terms (:func:`~.layers.writes.derived_columns`: ``invoices.Total`` = the sum of
    its lines), or a DELETE of a row that is counted in such a total (an invoice line), so the
    data no longer adds up;
  - ``doubled-noun``: a noun said twice over outside quotes ("the total of the total", "the
    address for the address", "the total total": :func:`~.phrasing.doubled_noun`);
  - ``sql-speak``: table or query words outside quotes ("which invoices row", "the rating
    values", "without repeats", "(COUNT)": :func:`~.phrasing.sql_speak`);
  - ``bad-plural``: a noun in the wrong number ("How many inventory are there", "per genres":
    :func:`~.phrasing.bad_plural`);
  - ``own-id-list``: a read whose answer lists row keys and nothing else (identifier columns
    only, two rows or more, no aggregate): "What invoice ID do the invoices with billing state
    "FL" have?", "list the payment IDs of their payments"; a user asks which rows, and a row is
    named by what it is (a name, a title, a date), a key only beside it;
  - ``swap-group-unnamed``: a swap whose group is named by a number ("Among the rentals of
    inventory 124, ..."), not by a name a user knows;
  - ``swap-of-group-value``: a swap of a column that is not shown to vary inside the groups
    of any column the two rows share (:func:`~.consistency.varies_within`) (the district of a
    city's addresses: two addresses of one city that differ in it are an error of the data,
    not two values mixed up);
  - ``reply-sql-speak``: a simulated user's reply, rendered as the suite is played (the
    simulator a task file gets by default, :func:`~clarisql.envs.simulators.resolve_simulator`,
    one reply per gold label), names a table or column by its identifier (``BillingState``,
    ``first_name``, ``Total`` mid-sentence), says a name that cannot be put in words ("the
    g") or speaks SQL (``AVG``, ``COUNT(``, ``=``) outside the value it reveals
    (:func:`reply_sql_speak`);
  - ``fragment-from-middle``: a name label (``not-exist`` / ``Error``) whose surface the gold
    contains but does not start with ("Back" for "Holding Back The Years"): no user cuts a
    name short from its middle;
  - ``blend-gold-is-tail``: a made-up name (nothing contains it, no value within a typo's
    reach) whose gold it was made from by its ending, not its start ("Gutincis" for Francis):
    it reads as another name with the gold's tail glued on
    (:func:`~.layers.surfaces.begins_alike`);
  - ``own-noun-called-name``: a record whose key column is only its own noun, with no name
    column, said to have a name ("the address whose name is "1002 Ahmadnagar Manor""): it is
    said as the record itself ("the address "1002 Ahmadnagar Manor"",
    :func:`~.phrasing.plain_key`);
  - ``write-leaves-row-inconsistent``: a point update or swap the data contradicts: a
    dependency broken, a value the row or a row referring to it spells changed, the names of
    two whole things swapped, a date moved against a key it follows
    (:mod:`~.consistency`);
  - ``non-english-identifier``: a schema word that is not English (:func:`foreign_words`:
    ``stadt``, ``abschrift``) in the question, with or without an English plural glued on.
    Needs wordfreq (the ``synth`` extra); without it the check finds nothing.
- ``unanswerable-with-matching-column`` counts the tables the declared foreign keys reach as
  reachable too, whatever their columns' names (``current_address`` -> ``addresses``).
- The checks parse the gold with sqlglot and run statements through the
  :class:`~.verify.Verifier` (the same sandbox and step budget), so the audit is deterministic.
- :func:`review_sheet` picks a stratified sample (the same number per category, seeded) with
  question, gold SQL, result rows and the simulator's replies for a human reviewer (Markdown).
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from clarisql.envs.synth.column_roles import column_role, credit_list, summable
from clarisql.envs.synth.consistency import varies_within
from clarisql.envs.synth.discover import name_similarity
from clarisql.envs.synth.names import in_words, speakable, split_name
from clarisql.envs.synth.phrasing import bad_plural, doubled_noun, sql_speak
from clarisql.envs.synth.types import ColumnProfile, LakeProfile, join_on, quote_ident
from clarisql.envs.synth.verify import Verifier, same_answer
from clarisql.envs.tasks import Task

FLAWS = (
    "join-path-disagreement",
    "aggregate-over-non-measure",
    "group-by-aggregated-column",
    "unanswerable-with-matching-column",
    "typo-with-unique-nearest-value",
    "raw-column-token",
    "listed-answer-without-identifier",
    "list-column-as-category",
    "write-row-not-identified",
    "which-table-given-away",
    "helper-table-subject",
    "swap-between-unrelated-rows",
    "bulk-update-to-one-value",
    "write-breaks-derived-total",
    "doubled-noun",
    "non-english-identifier",
    "write-leaves-row-inconsistent",
    "sql-speak",
    "bad-plural",
    "own-id-list",
    "swap-group-unnamed",
    "swap-of-group-value",
    "reply-sql-speak",
    "fragment-from-middle",
    "blend-gold-is-tail",
    "own-noun-called-name",
)
_NEVER_AGG = {"identifier", "code", "coordinate", "time", "flag", "ordinal"}
_IDENTIFYING = {"identifier", "code", "name", "date"}
_RAW = re.compile(r"[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z]*|[A-Za-z]+\d+[A-Za-z]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
#: SQL a user does not say: keywords and aggregate names in capitals, a function call, an
#: operator
_SQL_WORDS = re.compile(
    r"\b(?:SELECT|FROM|WHERE|GROUP BY|ORDER BY|HAVING|DISTINCT|COUNT|AVG|SUM|MIN|MAX|LIMIT|"
    r"JOIN|LIKE|IS NULL|NOT NULL)\b|\b(?i:count|avg|sum|min|max|round|cast|strftime)\s*\(|[=<>]"
)
#: where a capital letter only starts a sentence
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\(\s*)$")
#: what separates the members of a credit or list value ("A/B/C", "A, B & C", "A; B")
_LIST_SEP = re.compile(r"\s*(?:/|,|&|;|\|)\s*")
#: languages a schema's words are compared against English in (wordfreq's codes)
_OTHER_LANGUAGES = ("de", "fr", "es", "it", "pt", "nl")


@dataclass
class AuditReport:
    """What :func:`audit_tasks` found."""

    tasks: Counter = field(default_factory=Counter)  # category -> tasks read
    flaws: dict[str, Counter] = field(default_factory=lambda: {f: Counter() for f in FLAWS})
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _seen: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def add(self, flaw: str, task: Task, why: str) -> None:
        """Count ``task`` once per flaw, whichever check finds it first."""
        if (flaw, task.id) in self._seen:
            return
        self._seen.add((flaw, task.id))
        self.flaws[flaw][task.category] += 1
        if len(self.examples[flaw]) < 5:
            self.examples[flaw].append(f"{task.id}: {why} | {task.utterance}")

    def total(self, flaw: str) -> int:
        return sum(self.flaws[flaw].values())

    def merge(self, other: AuditReport) -> None:
        self.tasks.update(other.tasks)
        for f in FLAWS:
            self.flaws[f].update(other.flaws[f])
            self.examples[f].extend(other.examples[f][: 5 - len(self.examples[f])])


def _parse(sql: str | None) -> exp.Expression | None:
    if not sql:
        return None
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError:
        return None


class _Schema:
    def __init__(self, lake: LakeProfile):
        self.lake = lake
        self.cols: dict[tuple[str, str], ColumnProfile] = {
            (t.name.lower(), c.name.lower()): c for t in lake.tables for c in t.columns
        }
        self.by_name: dict[str, list[ColumnProfile]] = defaultdict(list)
        for t in lake.tables:
            for c in t.columns:
                self.by_name[c.name.lower()].append(c)
        self._role: dict[tuple[str, str], str] = {}

    def resolve(self, col: exp.Column, tables: Sequence[str], aliases: dict[str, str]) -> Any:
        t = col.table
        if t:
            return self.cols.get((aliases.get(t.lower(), t.lower()), col.name.lower()))
        for name in tables:
            c = self.cols.get((name.lower(), col.name.lower()))
            if c is not None:
                return c
        found = self.by_name.get(col.name.lower(), [])
        return found[0] if len(found) == 1 else None

    def role(self, c: ColumnProfile) -> str:
        key = (c.table, c.name)
        if key not in self._role:
            self._role[key] = column_role(c)
        return self._role[key]


def _tables(sel: exp.Expression) -> tuple[list[str], dict[str, str]]:
    names, aliases = [], {}
    for t in sel.find_all(exp.Table):
        names.append(t.name)
        if t.alias:
            aliases[t.alias.lower()] = t.name.lower()
    return names, aliases


def _unwrap(e: exp.Expression) -> exp.Expression:
    while isinstance(e, (exp.Cast, exp.Paren, exp.TryCast)):
        e = e.this
    return e


def _levenshtein(a: str, b: str, cap: int = 3) -> int:
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


class Auditor:
    """Audits tasks over one database (see the module docstring)."""

    def __init__(
        self, lake: LakeProfile, v: Verifier, semantic: Callable[[str, str], bool] | None = None
    ):
        self.lake, self.v, self.semantic = lake, v, semantic
        self.schema = _Schema(lake)
        self._values: dict[tuple[str, str], list[str]] = {}
        self._unique: dict[tuple[str, str], bool] = {}
        self._declared = self._foreign_keys()
        self.raw_names = {
            n
            for t in lake.tables
            for n in (t.name, *(c.name for c in t.columns))
            if _RAW.fullmatch(n)
        }
        self.unspeakable = {c.name for t in lake.tables for c in t.columns if not speakable(c.name)}
        self.identifiers = schema_identifiers(
            n for t in lake.tables for n in (t.name, *(c.name for c in t.columns))
        )
        self.simulator = _suite_simulator()
        self._lists: dict[tuple[str, str], bool] = {}
        # a record whose key is only its own noun (the ``address`` of an address): "the address
        # whose name is ..." gives it a name it does not have
        from clarisql.envs.synth.phrasing import OWN_NOUN, key_words, row_noun

        own = {
            row_noun(in_words(t.name))
            for t in lake.tables
            for c in t.columns
            if key_words(in_words(c.name), row_noun(in_words(t.name))).startswith(OWN_NOUN)
            and not any("name" in split_name(x.name) for x in t.columns)
        }
        self.own_noun = (
            re.compile(
                r"\b(?:" + "|".join(re.escape(n) for n in sorted(own)) + r")\s+"
                r"(?:whose\s+name\s+is|with\s+name|where\s+the\s+name\s+is)\s+[\"']",
                re.I,
            )
            if own
            else None
        )
        self._derived: set[tuple[str, str]] | None = None
        self._refs: list | None = None
        self._deps: Any = None
        self.foreign = foreign_words(
            w
            for t in lake.tables
            for n in (t.name, *(c.name for c in t.columns))
            for w in split_name(n)
        )

    def _foreign_keys(self) -> set[tuple[tuple[str, str], tuple[str, str]]]:
        out = set()
        for t in self.lake.tables:
            rows = self.v.rows(f"SELECT * FROM pragma_foreign_key_list('{t.name}')") or []
            for r in rows:
                if r[4] is not None:
                    out.add(((t.name, r[3]), (r[2], r[4])))
        return out

    def unique(self, c: ColumnProfile) -> bool:
        key = (c.table, c.name)
        if key not in self._unique:
            q = (
                f"SELECT COUNT(*) = COUNT(DISTINCT {quote_ident(c.name)}) "
                f"FROM {quote_ident(c.table)} WHERE {quote_ident(c.name)} IS NOT NULL"
            )
            rows = self.v.rows(q)
            self._unique[key] = bool(rows and rows[0][0])
        return self._unique[key]

    def values(self, c: ColumnProfile) -> list[str]:
        key = (c.table, c.name)
        if key not in self._values:
            rows = self.v.rows(
                f"SELECT DISTINCT CAST({quote_ident(c.name)} AS TEXT) FROM {quote_ident(c.table)} "
                f"WHERE {quote_ident(c.name)} IS NOT NULL LIMIT 4999"
            )
            self._values[key] = [r[0] for r in rows or [] if r[0] is not None]
        return self._values[key]

    # --- the checks ---------------------------------------------------------------------------
    def audit(self, task: Task, report: AuditReport) -> None:
        report.tasks[task.category] += 1
        tree = _parse(task.gold_sql)
        if tree is not None and task.answerable and not task.writable:
            self._joins(task, tree, report)
            self._aggregates(task, tree, report)
            self._listing(task, tree, report)
            self._own_ids(task, tree, report)
        self._raw_tokens(task, report)
        if task.underspecs:
            self._reply_words(task, report)
        if not task.answerable:
            self._unanswerable(task, report)
        self._typos(task, report)
        self._surface_start(task, report)
        self._helpers(task, report)
        self._credits(task, report)
        self._doubled(task, report)
        self._foreign(task, report)
        if task.writable:
            self._writes(task, report)
            self._write_sense(task, report)
            self._row_sense(task, report)

    def _writes(self, task: Task, report: AuditReport) -> None:
        from clarisql.envs.synth.layers.common import families
        from clarisql.envs.synth.layers.writes import reveals_table

        labels = {u.label.kind for u in task.underspecs}
        for act in task.gold_actions:
            tree = _parse(act)
            if isinstance(tree, (exp.Update, exp.Delete)) and labels <= {"not-exist"}:
                where = tree.args.get("where")
                table = tree.this if isinstance(tree, exp.Update) else tree.this
                tname = table.name if isinstance(table, exp.Table) else ""
                cols = [
                    self.schema.resolve(e.this, [tname], {})
                    for e in (where.find_all(exp.EQ) if where else ())
                    if isinstance(e.this, exp.Column)
                ]
                if not any(c is not None and self.unique(c) for c in cols):
                    report.add("write-row-not-identified", task, act[:80])
            if isinstance(tree, exp.Insert) and any(
                u.label.kind == "Missing" and u.label.slot == "table" for u in task.underspecs
            ):
                schema = tree.this
                gold_t = schema.this.name if isinstance(schema, exp.Schema) else ""
                names = (
                    [c.name for c in schema.expressions] if isinstance(schema, exp.Schema) else []
                )
                values = tree.expression.expressions[0].expressions if tree.expression else []
                fam = next((f for f in families(self.lake) if gold_t in f), [])
                others = [t for t in fam if t != gold_t]
                for col, val in zip(names, values, strict=False):
                    x = val.to_py() if isinstance(val, exp.Literal) else None
                    if others and reveals_table(self.v, gold_t, others, col, x):
                        report.add("which-table-given-away", task, f"{col} = {x!r}")
                        break

    def _helpers(self, task: Task, report: AuditReport) -> None:
        helpers = {t.name.casefold() for t in self.lake.helpers}
        if not helpers:
            return
        meta = task.metadata
        named = [t for t in meta.get("tables", []) if isinstance(t, str)]
        for ref in [*meta.get("columns", []), meta.get("resembles")]:
            if isinstance(ref, str) and "." in ref:
                named.append(ref.rpartition(".")[0])
        sqls = [task.gold_sql, meta.get("naive_sql"), *task.gold_actions]
        sqls += [a for a in meta.get("naive_actions", []) if isinstance(a, str)]
        for sql in sqls:
            tree = _parse(sql) if isinstance(sql, str) else None
            if tree is not None:
                named += [t.name for t in tree.find_all(exp.Table)]
        hit = sorted({n for n in named if n.casefold() in helpers})
        if hit:
            report.add("helper-table-subject", task, ", ".join(hit))

    def _joins(self, task: Task, tree: exp.Expression, report: AuditReport) -> None:
        names, aliases = _tables(tree)
        for j in tree.find_all(exp.Join):
            on = j.args.get("on")
            if not isinstance(on, exp.EQ):
                continue
            a, b = _unwrap(on.this), _unwrap(on.expression)
            if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
                continue
            ca = self.schema.resolve(a, names, aliases)
            cb = self.schema.resolve(b, names, aliases)
            if ca is None or cb is None:
                continue
            if not (self.unique(ca) or self.unique(cb)):
                report.add("join-path-disagreement", task, f"join on a non-key {on.sql()}")
                continue
            gold = self.v.rows(task.gold_sql or "")
            for alt in self._alternatives(ca, cb):
                text = on.sql(dialect="sqlite")
                if text not in (task.gold_sql or ""):
                    break
                other = self.v.rows((task.gold_sql or "").replace(text, join_on(*alt)))
                if gold is not None and (other is None or not same_answer(gold, other)):
                    report.add("join-path-disagreement", task, f"{text} vs {join_on(*alt)}")
                    return

    def _alternatives(self, ca: ColumnProfile, cb: ColumnProfile) -> list:
        out = []
        ta, tb = self.lake.table(ca.table), self.lake.table(cb.table)
        for x in ta.columns:
            for y in tb.columns:
                if (x.name, y.name) == (ca.name, cb.name) or x.kind != y.kind:
                    continue
                declared = ((x.table, x.name), (y.table, y.name)) in self._declared or (
                    (y.table, y.name),
                    (x.table, x.name),
                ) in self._declared
                if not declared and name_similarity(x, y) < 0.8:
                    continue
                if not (self.unique(y) or self.unique(x)):
                    continue
                vx, vy = set(self.values(x)), set(self.values(y))
                small, big = (vx, vy) if self.unique(y) else (vy, vx)
                if small and len(small & big) >= 0.8 * len(small):
                    out.append(((x.table, x.name), (y.table, y.name)))
        return out

    def _aggregates(self, task: Task, tree: exp.Expression, report: AuditReport) -> None:
        for sel in tree.find_all(exp.Select):
            names, aliases = _tables(sel)
            aggregated = set()
            for agg in sel.find_all(exp.Sum, exp.Avg, exp.Max, exp.Min):
                if agg.find_ancestor(exp.Select) is not sel:
                    continue
                arg = _unwrap(agg.this)
                if not isinstance(arg, exp.Column):
                    continue
                c = self.schema.resolve(arg, names, aliases)
                if c is None:
                    continue
                aggregated.add((c.table, c.name))
                role = self.schema.role(c)
                if isinstance(agg, exp.Sum) and role == "measure" and not summable(c):
                    report.add("aggregate-over-non-measure", task, f"SUM({c.name}) of a rate")
                elif role in _NEVER_AGG or (role == "date" and isinstance(agg, (exp.Sum, exp.Avg))):
                    report.add(
                        "aggregate-over-non-measure",
                        task,
                        f"{agg.key.upper()}({c.name}) over a {role}",
                    )
            group = sel.args.get("group")
            for g in group.expressions if group else ():
                g = _unwrap(g)
                if isinstance(g, exp.Column):
                    c = self.schema.resolve(g, names, aliases)
                    if c is not None and (c.table, c.name) in aggregated:
                        report.add("group-by-aggregated-column", task, f"GROUP BY {c.name}")
                    if c is not None and self.is_list(c) and not self.unique(c):
                        report.add("list-column-as-category", task, f"GROUP BY {c.name}")
            for eq in sel.find_all(exp.EQ):
                if eq.find_ancestor(exp.Select) is not sel:
                    continue
                col = _unwrap(eq.this)
                if isinstance(col, exp.Column) and isinstance(_unwrap(eq.expression), exp.Literal):
                    c = self.schema.resolve(col, names, aliases)
                    if c is not None and self.is_list(c) and not self.unique(c):
                        report.add("list-column-as-category", task, f"{c.name} = a value")

    def _listing(self, task: Task, tree: exp.Expression, report: AuditReport) -> None:
        rows = self.v.rows(task.gold_sql or "")
        if not rows or len(rows) < 2 or not isinstance(tree, exp.Select):
            return
        plain = not tree.args.get("distinct") and not tree.args.get("group")
        if plain and not any(e.find(exp.AggFunc) for e in tree.expressions):
            repeated = len(rows) - len({tuple(r) for r in rows})
            if repeated:  # rows nobody can tell apart: "Sidney" seven times, no invoice
                report.add(
                    "listed-answer-without-identifier",
                    task,
                    f"{len(rows)} rows, {repeated} repeats",
                )
                return
        if len(rows[0]) < 2:
            return
        inner = {
            a.alias.lower(): a.this
            for a in tree.find_all(exp.Alias)
            if isinstance(a.this, (exp.Column, exp.Cast))
        }
        names, aliases = _tables(tree)
        group = tree.args.get("group")
        keys = {_unwrap(g).sql().lower() for g in group.expressions} if group else set()
        for e in tree.expressions:
            if isinstance(e, exp.Alias) and len(keys) == 1 and e.alias.lower() in keys:
                return  # grouped by the projection's alias
            e = _unwrap(e.this if isinstance(e, exp.Alias) else e)
            if keys and e.sql().lower() in keys and len(keys) == 1:
                return  # one row per value of the projected group key
            if isinstance(e, exp.Column) and not e.table and e.name.lower() in inner:
                e = _unwrap(inner[e.name.lower()])
            if not isinstance(e, exp.Column):
                continue
            c = self.schema.resolve(e, names, aliases)
            if c is not None and (self.schema.role(c) in _IDENTIFYING or self.unique(c)):
                return
            if c is not None and self.schema.role(c) == "category" and not keys:
                return
        report.add("listed-answer-without-identifier", task, f"{len(rows)} rows")

    def _raw_tokens(self, task: Task, report: AuditReport) -> None:
        text = _QUOTED.sub(" ", task.utterance)
        for name in self.raw_names:
            if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
                report.add("raw-column-token", task, name)
                return
        for name in self.unspeakable:  # (as written, or split into its words)
            for form in dict.fromkeys((name, in_words(name))):
                if re.search(rf"\bthe {re.escape(form)}\b", text, re.I):
                    report.add("raw-column-token", task, name)
                    return

    def _reply_words(self, task: Task, report: AuditReport) -> None:
        render = getattr(self.simulator, "render", None)
        if render is None:
            return
        for u in task.underspecs:
            text = render(u, task)
            # the value it reveals (and the words the user wrote) are data, not names
            said = () if u.label.kind == "intent" else (str(u.value), u.label.content)
            why = reply_sql_speak(text, self.identifiers, said)
            if why is None:  # a name no words can say ("The g I mean is 3.")
                rest = sql_speak_text(text, said)
                why = next(
                    (
                        f"unspeakable name {name!r}"
                        for name in sorted(self.unspeakable)
                        if re.search(rf"\bthe {re.escape(in_words(name))}\b", rest, re.I)
                    ),
                    None,
                )
            if why is not None:
                report.add("reply-sql-speak", task, f"{why} in the reply {text!r}")
                return

    def _unanswerable(self, task: Task, report: AuditReport) -> None:
        from clarisql.envs.synth.layers.unanswerable import absent

        attr = task.metadata.get("requested")
        if not isinstance(attr, str):
            return
        tables = list(self.lake.tables)
        names = {t.name for t in self.lake.tables}  # (a helper table is counted on its own)
        asked = [t for t in task.metadata.get("tables", []) if isinstance(t, str) and t in names]
        if asked:
            from clarisql.envs.synth.layers.unanswerable import _UnansGen

            gen = _UnansGen(self.lake, self.v, random.Random(0))
            surface = task.unanswerable_kind == "column-surface"
            people = {  # other people's tables: their columns are not the asked rows' own
                t: gen.other_people(self.lake.table(t)) if surface else frozenset() for t in asked
            }
            if any(gen.in_doubt(self.lake.table(t), attr, people[t]) for t in asked):
                # a column the asked table reaches by joins shares the attribute's head noun
                report.add("unanswerable-with-matching-column", task, f"{attr} (head noun)")
                return
            if surface:
                # TrustSQL's column-surface kind: the column exists, but in a table the one
                # asked about cannot reach, or reaches only through other people's rows
                # (a customer's support rep); only the other tables it reaches count
                near = set().union(*(gen.reachable(self.lake.table(t)) for t in asked))
                near |= self.fk_reach(asked)  # declared keys link whatever their names
                near -= set().union(*people.values())
                tables = [t for t in tables if t.name in near]
        if not absent(attr, tables, self.semantic):
            report.add("unanswerable-with-matching-column", task, attr)

    def fk_reach(self, tables: Sequence[str]) -> set[str]:
        """Tables the declared foreign keys link ``tables`` to, in any number of steps."""
        seen, frontier = set(tables), set(tables)
        while frontier:
            nxt = set()
            for (a, _), (b, _) in self._declared:
                if a in frontier and b not in seen:
                    nxt.add(b)
                if b in frontier and a not in seen:
                    nxt.add(a)
            seen |= nxt
            frontier = nxt
        return seen

    def is_list(self, c: ColumnProfile) -> bool:
        """A column of joined items (role ``list``), or a text column whose values read as
        lists of names (:func:`credit_list`: ``Bill Gould/Mike Bordin/Mike Patton``)."""
        key = (c.table, c.name)
        if key not in self._lists:
            self._lists[key] = self.schema.role(c) == "list" or (
                c.kind == "text" and credit_list(self.values(c))
            )
        return self._lists[key]

    def _credits(self, task: Task, report: AuditReport) -> None:
        """A name clarification whose gold is one whole member list of a list column (of the
        task's tables where it names them: a track's ``Name`` is no artist's ``Name``)."""
        tables = set(task.metadata.get("tables") or ())
        for u in task.underspecs:
            if u.label.kind not in ("not-exist", "Error") or not isinstance(u.value, str):
                continue
            cols = [
                c
                for t in self.lake.tables
                if not tables or t.name in tables
                for c in t.columns
                if c.name == u.label.slot and c.kind == "text"
            ]
            if any(self.is_list(c) for c in cols) and len(_LIST_SEP.split(u.value)) >= 2:
                report.add("list-column-as-category", task, f"{u.label.slot} -> {u.value!r}")
                return

    def _doubled(self, task: Task, report: AuditReport) -> None:
        m = doubled_noun(task.utterance)
        if m:
            report.add("doubled-noun", task, m)
        m = sql_speak(task.utterance)
        if m:
            report.add("sql-speak", task, m)
        m = bad_plural(task.utterance)
        if m:
            report.add("bad-plural", task, m)
        hit = self.own_noun.search(task.utterance) if self.own_noun else None
        if hit or "\ue000" in task.utterance:
            report.add("own-noun-called-name", task, hit.group(0) if hit else "marker left")

    def _own_ids(self, task: Task, tree: exp.Expression, report: AuditReport) -> None:
        """A listing whose every column is a key of rows (an identifier), with no aggregate."""
        if not isinstance(tree, exp.Select) or any(e.find(exp.AggFunc) for e in tree.expressions):
            return
        names, aliases = _tables(tree)
        cols = []
        for e in tree.expressions:
            e = _unwrap(e.this if isinstance(e, exp.Alias) else e)
            c = self.schema.resolve(e, names, aliases) if isinstance(e, exp.Column) else None
            if c is None or not (self.schema.role(c) == "identifier" and c.kind == "integer"):
                return
            cols.append(c.name)
        rows = self.v.rows(task.gold_sql or "")
        if cols and rows and len(rows) >= 2:
            report.add("own-id-list", task, ", ".join(cols))

    def _foreign(self, task: Task, report: AuditReport) -> None:
        """A word of the schema that is not English (:func:`foreign_words`) in the question,
        outside quotes, with or without an English plural glued on."""
        if not self.foreign:
            return
        text = _QUOTED.sub(" ", task.utterance).casefold()
        for w in sorted(self.foreign):
            if re.search(rf"(?<!\w){re.escape(w)}(?:s|es|n|en|e)?(?!\w)", text):
                report.add("non-english-identifier", task, w)
                return

    def derived(self) -> set[tuple[str, str]]:
        if self._derived is None:
            from clarisql.envs.synth.layers.writes import derived_columns, references

            self._refs = references(self.lake, self.v)
            self._derived = derived_columns(self.lake, self.v, self._refs)
        return self._derived

    def _write_sense(self, task: Task, report: AuditReport) -> None:
        """Writes no user asks for: two rows that have nothing in common (or a measure) swapped,
        a range of rows all set to one number, a total of other rows changed alone."""
        from clarisql.envs.synth.layers.writes import feeds_total

        trees = [_parse(a) for a in task.gold_actions]
        ups = [t for t in trees if isinstance(t, exp.Update)]
        found: set[str] = set()
        for d in trees:
            if isinstance(d, exp.Delete) and isinstance(d.this, exp.Table):
                if feeds_total(d.this.name, self.derived(), self._refs or []):
                    found.add("derived")
                    report.add("write-breaks-derived-total", task, f"DELETE FROM {d.this.name}")
        for up in ups:
            tname = up.this.name if isinstance(up.this, exp.Table) else ""
            for eq in up.expressions:
                col = eq.this if isinstance(eq, exp.EQ) else None
                if not isinstance(col, exp.Column):
                    continue
                c = self.schema.resolve(col, [tname], {})
                if c is None:
                    continue
                if (c.table, c.name) in self.derived() and "derived" not in found:
                    found.add("derived")
                    report.add("write-breaks-derived-total", task, f"SET {c.name}")
                literal = isinstance(_unwrap(eq.expression), exp.Literal)
                if literal and "bulk" not in found and self.schema.role(c) == "measure":
                    if not self._one_row(up, tname):
                        found.add("bulk")
                        report.add("bulk-update-to-one-value", task, up.sql()[:80])
        if len(ups) == 2 and len(trees) == 2:
            self._swap(task, ups, report)
            head = _QUOTED.sub(" ", task.utterance).split(",")[0].strip()
            if re.search(r"\d+$", head):  # "Among the rentals of inventory 124, ..."
                report.add("swap-group-unnamed", task, head)

    def _row_sense(self, task: Task, report: AuditReport) -> None:
        """A point update (or swap) whose new value the row itself contradicts: a dependency
        that holds on the data broken (a Salt Lake City invoice billed to state "RJ"), a value
        that another column of the row spells renamed (a first name inside the e-mail), a value
        that rows referring to the row spell (an album's title track, a city's addresses'
        district), the names of two whole things swapped (two albums, two cities: rows of
        another table describe them) unless they differ in a number alone, or a date swapped
        against a key it follows (invoices numbered in date order):
        :mod:`~clarisql.envs.synth.consistency`."""
        from clarisql.envs.synth.consistency import (
            Dependencies,
            spelled_in_children,
            spelled_in_row,
            whole_things_swapped,
        )

        if self._deps is None:
            self._deps = Dependencies(self.v, self.lake)
        points = []
        for act in task.gold_actions:
            up = _parse(act)
            if not isinstance(up, exp.Update) or not isinstance(up.this, exp.Table):
                continue
            where = up.args.get("where")
            eq = where.this if where is not None else None
            if not (isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column)):
                continue
            kv = _unwrap(eq.expression)
            sets = [
                (s.this.name, _unwrap(s.expression))
                for s in up.expressions
                if isinstance(s, exp.EQ) and isinstance(s.this, exp.Column)
            ]
            if not isinstance(kv, exp.Literal) or not all(
                isinstance(x, (exp.Literal, exp.Null)) for _, x in sets
            ):
                continue
            points.append((up.this.name, eq.this.name, kv.to_py(), sets))
        self.derived()  # (fills the references)
        refs = self._refs or []
        seen: dict[tuple[str, str], list[dict]] = {}
        for tname, k, kv, sets in points:
            try:
                t = self.lake.table(tname)
                kc = t.column(k)
            except KeyError:
                continue
            if not self.unique(kc):
                continue
            rows = self.v.rows(
                f"SELECT * FROM {quote_ident(tname)} WHERE {quote_ident(k)} = "
                f"{exp.Literal.string(kv).sql() if isinstance(kv, str) else kv}"
            )
            if not rows or len(rows) != 1:
                continue
            row = dict(zip([c.name for c in t.columns], rows[0], strict=False))
            for c, x in sets:
                new = None if isinstance(x, exp.Null) else x.to_py()
                if new != row.get(c):
                    seen.setdefault((tname, c), []).append(row)
                    told = spelled_in_children(self.v, refs, tname, row, c)
                    if told:
                        why = f"{c} {row.get(c)!r} is spelled in {told}"
                        report.add("write-leaves-row-inconsistent", task, why)
                        return
            exclude = [p[2] for p in points if p[0] == tname and p[1] == k and p[2] != kv]
            for c, x in sets:
                new = None if isinstance(x, exp.Null) else x.to_py()
                why = self._deps.breaks_dependency(
                    t, row, c, new, k, exclude, not exclude
                ) or self._deps.breaks_order(t, row, c, new)
                tied = self._deps.tied(t, c) if not exclude and new != row.get(c) else None
                if why is None and tied and isinstance(new, (int, float)):
                    why = f"{c} moves with {tied} on the data; {tied} is left as it is"
                if why is None and new != row.get(c):
                    spelled = spelled_in_row(row, c)
                    if spelled:
                        why = f"{c} {row.get(c)!r} is spelled in {spelled} {row[spelled]!r}"
                if why:
                    report.add("write-leaves-row-inconsistent", task, why)
                    return
        for (tname, c), pair in seen.items():
            if len(pair) != 2:
                continue
            t = self.lake.table(tname)
            a, b = pair
            why = self._deps.swap_breaks_order(t, a, b, c) or whole_things_swapped(
                self.v, refs, t, t.column(c), a, b
            )
            if why:
                report.add("write-leaves-row-inconsistent", task, why)
                return

    def _one_row(self, up: exp.Update, tname: str) -> bool:
        where = up.args.get("where")
        for e in where.find_all(exp.EQ) if where else ():
            if isinstance(e.this, exp.Column) and isinstance(_unwrap(e.expression), exp.Literal):
                c = self.schema.resolve(e.this, [tname], {})
                if c is not None and self.unique(c):
                    return True
        return False

    def _swap(self, task: Task, ups: list[exp.Update], report: AuditReport) -> None:
        sets, keys = [], []
        for up in ups:
            tname = up.this.name if isinstance(up.this, exp.Table) else ""
            where = up.args.get("where")
            eqs = [
                e
                for e in (where.find_all(exp.EQ) if where else ())
                if isinstance(e.this, exp.Column)
            ]
            if len(up.expressions) != 1 or len(eqs) != 1:
                return
            sets.append((tname, up.expressions[0].this.name, _unwrap(up.expressions[0].expression)))
            keys.append((eqs[0].this.name, _unwrap(eqs[0].expression)))
        (ta, ca, va), (tb, cb, vb) = sets
        if (ta, ca) != (tb, cb) or keys[0][0] != keys[1][0]:
            return
        k = keys[0][0]
        rows = self.v.rows(
            f"SELECT * FROM {quote_ident(ta)} WHERE {quote_ident(k)} IN "
            f"({keys[0][1].sql()}, {keys[1][1].sql()})"
        )
        t = self.lake.table(ta)
        if not rows or len(rows) != 2:
            return
        i = [c.name for c in t.columns].index(ca)
        if (
            {str(rows[0][i]), str(rows[1][i])} != {str(va.to_py()), str(vb.to_py())}
            if isinstance(va, exp.Literal) and isinstance(vb, exp.Literal)
            else True
        ):
            return  # not an exchange of the two rows' values
        c = t.column(ca)
        if self.schema.role(c) == "measure":
            report.add("swap-between-unrelated-rows", task, f"swaps a measure {ca}")
            return
        self.derived()  # (fills the references)
        refs = {s[0] for child, s, _, _ in self._refs or [] if child == ta and len(s) == 1}
        shared = [
            x.name
            for j, x in enumerate(t.columns)
            if x.name not in (ca, k)
            and (x.name in refs or self.schema.role(x) == "category")
            and rows[0][j] is not None
            and rows[0][j] == rows[1][j]
        ]
        if not shared:
            report.add("swap-between-unrelated-rows", task, f"{ca}: rows share no parent or group")
        if shared and not any(varies_within(self.v, ta, g, ca) for g in shared):
            report.add(
                "swap-of-group-value", task, f"{ca} not shown to vary per {', '.join(shared)}"
            )

    def _surface_start(self, task: Task, report: AuditReport) -> None:
        """A written name that does not begin as the value meant does: a cut-off taken from the
        middle of it ("Back" for "Holding Back The Years"), or a made-up name whose link to
        the gold is its tail ("Gutincis" for Francis): :func:`~.layers.surfaces.begins_alike`."""
        from clarisql.envs.explorers import contains, levenshtein, made_from, typo_bound
        from clarisql.envs.synth.layers.surfaces import begins_alike

        for u in task.underspecs:
            if u.label.kind not in ("not-exist", "Error") or not u.label.content:
                continue
            if not isinstance(u.value, str) or not u.value.strip():
                continue
            s, gold = u.label.content.strip(), u.value.strip()
            if contains(s, gold):
                if not gold.casefold().startswith(s.casefold()):
                    report.add("fragment-from-middle", task, f"{s!r} -> {gold!r}")
                    return
                continue
            bound = typo_bound(s)
            if levenshtein(s.casefold(), gold.casefold(), bound) <= bound:
                continue  # a misspelling of the gold
            if made_from(s, gold) and not begins_alike(s, gold):
                report.add("blend-gold-is-tail", task, f"{s!r} -> {gold!r}")
                return

    def _typos(self, task: Task, report: AuditReport) -> None:
        for u in task.underspecs:
            kind, surface = u.label.kind, u.label.content
            if kind not in ("not-exist", "Error") or not surface or u.value is None:
                continue
            gold = str(u.value)
            cols = [
                c
                for t in self.lake.tables
                for c in t.columns
                if c.kind in ("text", "date") and gold in self.values(c)
            ]
            # the column the label names first: another table's column with the same value
            # (a continent beside a region) is not where the agent looks
            cols.sort(key=lambda c: c.name != u.label.slot)
            for c in cols[:1]:
                s = surface.casefold()
                # what the surface could stand for, whatever the label's kind: the values it
                # cuts short and the values within two edits (a misspelled Error value, a
                # cut-off not-exist name)
                near = [
                    v
                    for v in self.values(c)
                    if v.casefold().startswith(s) or _levenshtein(s, v.casefold()) <= 2
                ]
                if near == [gold]:
                    report.add("typo-with-unique-nearest-value", task, f"{surface!r} -> {gold!r}")
                    return


def foreign_words(words: Any, gap: float = 1.5, floor: float = 3.0) -> set[str]:
    """The words (>= 4 letters, case-folded) that are not English: rarer in English than
    ``floor`` on wordfreq's Zipf scale and at least ``gap`` more frequent in one of
    :data:`_OTHER_LANGUAGES` (``stadt``, ``zeile``, ``abschrift``; never ``land`` or ``suite``).
    Empty when wordfreq is not installed (``pip install 'clarisql[synth]'``)."""
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover - depends on the installation
        return set()
    out = set()
    for w in {str(x).casefold() for x in words}:
        if len(w) < 4 or not w.isalpha():
            continue
        en = zipf_frequency(w, "en")
        if en >= floor:
            continue
        other = max(zipf_frequency(w, lang) for lang in _OTHER_LANGUAGES)
        if other >= floor and other - en >= gap:
            out.add(w)
    return out


def schema_identifiers(names: Any) -> set[str]:
    """The names a user would not write as they stand: each table or column name that its
    words (:func:`~.names.in_words`) spell otherwise (``BillingState``, ``first_name``,
    ``Total``, ``Milliseconds``), at least two characters long."""
    return {n for n in names if len(n) >= 2 and in_words(n) != n}


def reply_sql_speak(text: str, identifiers: Any, said: Sequence[str] = ()) -> str | None:
    """Why ``text`` (a reply) reads as SQL, or ``None``: an identifier of ``identifiers`` as
    a whole word (case-sensitive; a capitalised plain word at a sentence start is a word), or
    SQL (:data:`_SQL_WORDS`: ``AVG``, ``COUNT(``, ``=``). The ``said`` strings (the value
    revealed, the words the user wrote) are taken out first: they are data."""
    text = sql_speak_text(text, said)
    m = _SQL_WORDS.search(text)
    if m:
        return f"SQL {m.group(0).strip()!r}"
    for name in sorted(identifiers, key=len, reverse=True):
        for hit in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            plain = in_words(name).capitalize() == name  # ("Total" is a word at a start)
            if plain and _SENTENCE_START.search(text[: hit.start()]):
                continue
            return f"identifier {name!r}"
    return None


def sql_speak_text(text: str, said: Sequence[str] = ()) -> str:
    """``text`` without the ``said`` strings (whole words only, longest first)."""
    for s in sorted({x for x in said if x and x.strip()}, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(s)}(?!\w)", " ", text)
    return text


def _suite_simulator() -> Any:
    """The user simulator a task file is played with when nothing else is asked for."""
    from clarisql.envs.simulators import make_simulator, resolve_simulator

    spec, kwargs = resolve_simulator(None, None, {})
    return make_simulator(spec, **kwargs)


def label_replies(task: Task) -> list[str]:
    """Each gold label of ``task`` and the reply that earns it, as the suite is played
    (``asked about Missing [] BillingState: The billing state I mean is WA.``)."""
    render = getattr(_suite_simulator(), "render", None)
    return [
        f"asked about {u.label.kind} [{u.label.content}] {u.label.slot}: "
        + (render(u, task) if render is not None else str(u.value))
        for u in task.underspecs
    ]


def audit_tasks(
    tasks: Sequence[Task],
    lake: LakeProfile,
    v: Verifier,
    semantic: Callable[[str, str], bool] | None = None,
) -> AuditReport:
    """Audit ``tasks`` over ``lake`` (see the module docstring)."""
    report = AuditReport()
    auditor = Auditor(lake, v, semantic)
    for t in tasks:
        auditor.audit(t, report)
    return report


def stratified(tasks: Sequence[Task], n: int, seed: int = 0) -> list[Task]:
    """``n`` tasks, as even over the categories as they allow (seeded, in a stable order)."""
    rng = random.Random(seed)
    by: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by[t.category].append(t)
    for ts in by.values():
        rng.shuffle(ts)
    out: list[Task] = []
    cats = sorted(by)
    i = 0
    while len(out) < n and any(by.values()):
        c = cats[i % len(cats)]
        if by[c]:
            out.append(by[c].pop())
        i += 1
    return out


def review_sheet(
    tasks: Sequence[Task], v: Verifier, n: int, seed: int = 0, replies: Any = None
) -> str:
    """A Markdown sheet of ``n`` stratified tasks for a human reviewer: question, gold SQL or
    actions, result (first rows), labels and the simulator's reply to each, and a blank
    verdict line. ``replies(task) -> list[str]`` gives the simulator's replies (optional)."""
    lines = [
        "# Review sheet",
        "",
        "For each task: would a user write this question, is the gold right, would you keep it?",
        "Write keep / drop and why on the verdict line.",
        "",
    ]
    for i, t in enumerate(stratified(tasks, n, seed), 1):
        lines += [f"## {i}. {t.id} ({t.category})", "", f"**Question:** {t.utterance}", ""]
        if t.writable:
            lines += ["**Gold actions:**", "", "```sql", *t.gold_actions, "```", ""]
        elif t.gold_sql:
            rows = v.rows(t.gold_sql)
            shown = "(no rows / failed)" if rows is None else repr(rows[:5])
            more = f" … {len(rows)} rows" if rows and len(rows) > 5 else ""
            lines += ["**Gold SQL:**", "", "```sql", t.gold_sql, "```", ""]
            lines += [f"**Result:** {shown}{more}", ""]
        if not t.answerable:
            lines += [f"**Unanswerable:** {t.unanswerable_kind}", ""]
        for u in t.underspecs:
            lines.append(
                f"- label {u.label.kind} [{u.label.content}] slot={u.label.slot} -> {u.value!r}"
            )
        for r in replies(t) if replies else ():
            lines.append(f"- reply: {r}")
        lines += ["", "Verdict: ____", ""]
    return "\n".join(lines)


def audit_folder(out_dir: Path, semantic: Any = None) -> tuple[AuditReport, list[Task]]:
    """Audit a ``clarisql synth`` output folder (``tasks.jsonl`` over ``lake.sqlite``)."""
    from clarisql.envs.synth.discover import discover
    from clarisql.envs.synth.profile import profile_lake
    from clarisql.envs.tasks import load_tasks

    tasks = load_tasks(Path(out_dir) / "tasks.jsonl")
    db = Path(out_dir) / "lake.sqlite"
    lake = discover(profile_lake(db))
    v = Verifier(db, max_rows=5000)
    try:
        return audit_tasks(tasks, lake, v, semantic), tasks
    finally:
        v.close()


__all__ = [
    "FLAWS",
    "AuditReport",
    "Auditor",
    "audit_folder",
    "audit_tasks",
    "label_replies",
    "review_sheet",
    "schema_identifiers",
    "reply_sql_speak",
    "stratified",
]
