"""What the three layers share: roles of columns, aggregate queries, surfaces, task assembly.

Column roles are read from the profile alone (no domain knowledge):
- a *measure* is a numeric column whose role (name and values together,
  :mod:`clarisql.envs.synth.column_roles`) is a measure: not a key, code, coordinate, date part,
  clock time, flag or rank, and with >= 3 distinct values;
- a *scope* is a column with 2..:data:`MAX_SCOPE_VALUES` distinct values that splits the rows
  into groups (a year, a region, a category); it is *year-like* when its name says so or every
  value is an integer year;
- an *entity* column names things (text, >= 5 distinct short values, mostly letters, not a
  scope): it is where abbreviated or misspelled names (ODUTQA-MDC's ``not-exist``) come from. A
  misspelled scope value is a FROM ``Error`` instead, so one column always gets one label kind.
A *family* is a set of same-schema tables (one per year, per region...): from the discovered
:class:`~clarisql.envs.synth.types.UnionPair` list, plus tables with identical column lists.

Every SQL string rendered here quotes identifiers and renders literals with :func:`sql_lit`; the
values come from the database itself (through :class:`~clarisql.envs.synth.verify.Verifier`), so
an equality filter matches the stored type.
"""

from __future__ import annotations

import functools
import heapq
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cydifflib import SequenceMatcher as _SequenceMatcher
from rapidfuzz import fuzz as _rf_fuzz
from rapidfuzz import process as _rf_process

from clarisql.envs.synth.column_roles import agg_names, column_role
from clarisql.envs.synth.names import in_words, speakable
from clarisql.envs.synth.phrasing import agg_words, plain_key, singular, wording_flaw
from clarisql.envs.synth.profile import present_sql, value_sql
from clarisql.envs.synth.types import (
    ColumnProfile,
    LakeProfile,
    TableProfile,
    quote_ident,
    sql_lit,
)
from clarisql.envs.synth.verify import Verifier, is_trivial, same_answer
from clarisql.envs.tasks import Task, Underspec

MAX_SCOPE_VALUES = 30
AGG_WORDS = {"avg": "average", "sum": "total", "max": "highest", "min": "lowest"}
_ID_NAME = re.compile(r"(^|_|\b)(id|key|code|no|num|number|uuid|guid)$|[a-z]Id$|ID$", re.I)
_YEAR_NAME = re.compile(r"year|yr$|^fy$|season", re.I)
_STOP = frozenset("the a an of and for in on at to by with from de la le el".split())

qi = quote_ident


def human(name: str) -> str:
    """A table or column name in words (:func:`clarisql.envs.synth.names.in_words`:
    ``UnitPrice`` -> ``unit price``, ``qty`` -> ``quantity``, ``weight_kg`` -> ``weight in kg``)."""
    return in_words(name)


def show(v: Any) -> str:
    """A value as the user would write it in a sentence."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


# --- column roles --------------------------------------------------------------------------------
def typeable(v: Any) -> bool:
    """Whether a user can write ``v`` as an utterance shows it: no text with a line break, a
    tab, or spaces doubled or at either end (:func:`tidy` would show it otherwise than the
    data holds it, and the value written in the question would find no row)."""
    return not isinstance(v, str) or v == " ".join(v.split())


def id_like_name(name: str) -> bool:
    """A key-like column name: ``id``, ``customer_id``, ``CustomerId``, ``code``, ``number``..."""
    return bool(_ID_NAME.search(name))


def id_like(c: ColumnProfile) -> bool:
    return bool(_ID_NAME.search(c.name)) or c.unique


@functools.lru_cache(maxsize=1 << 14)
def _cached_role(c: ColumnProfile) -> str:
    return column_role(c)


def role(c: ColumnProfile) -> str:
    """:func:`~clarisql.envs.synth.column_roles.column_role` of ``c``, computed once per profile
    (a pure function of the frozen profile, asked again and again by every layer)."""
    try:
        return _cached_role(c)
    except TypeError:  # (an unhashable value in the profile)
        return column_role(c)


def is_measure(c: ColumnProfile) -> bool:
    return (
        role(c) == "measure"  # names and values: no coordinate, clock time, code, rank
        and speakable(c.name)
        and c.kind in ("integer", "real")
        and not c.low_information
        and not _ID_NAME.search(c.name)
        and not (c.unique and c.kind == "integer")  # a unique integer is a key, not a measure
        and not (c.kind == "integer" and c.distinct <= 12)  # a month, a rank: a dimension
        and not is_year_like(c)
        and c.distinct >= 3
    )


def is_year_like(c: ColumnProfile) -> bool:
    if _YEAR_NAME.search(c.name):
        return True
    return (
        c.kind == "integer"
        and isinstance(c.min, (int, float))
        and isinstance(c.max, (int, float))
        and 1900 <= c.min <= c.max <= 2100
        and c.distinct <= MAX_SCOPE_VALUES
    )


#: roles that never make a scope to pick ("the one start time I'm working on", "the january")
_NOT_SCOPE = ("flag", "time", "ordinal", "coordinate", "identifier", "measure", "list")


def is_scope(c: ColumnProfile) -> bool:
    return (
        speakable(c.name)
        and (role(c) not in _NOT_SCOPE or is_year_like(c))
        and c.kind in ("text", "integer", "date", "boolean")
        and 2 <= c.distinct <= MAX_SCOPE_VALUES
        and c.rows >= 2 * c.distinct
        and c.missing < 0.5
        and not (id_like(c) and not is_year_like(c))
        and not c.low_information
        and not is_measure(c)  # a quantity (qty 1..20) is aggregated, not a scope to pick
    )


def is_entity(c: ColumnProfile) -> bool:
    """A name column: text, >= 5 short values that are not a scope (values that rarely repeat)."""
    if c.kind != "text" or c.low_information or c.distinct < 5 or c.missing > 0.5 or is_scope(c):
        return False
    if role(c) == "list":  # "Trailers,Deleted Scenes" names nothing
        return False
    if not speakable(c.name):
        return False
    texts = [s for s in c.samples if isinstance(s, str)]
    if not texts or sum(len(s) for s in texts) > 40 * len(texts):  # prose, not names
        return False
    return sum(any(ch.isalpha() for ch in s) for s in texts) >= 0.8 * len(texts)


def measures(t: TableProfile) -> list[ColumnProfile]:
    return [c for c in t.columns if is_measure(c)]


def scopes(t: TableProfile) -> list[ColumnProfile]:
    return [c for c in t.columns if is_scope(c)]


def entities(t: TableProfile) -> list[ColumnProfile]:
    return [c for c in t.columns if is_entity(c)]


def families(lake: LakeProfile) -> list[list[str]]:
    """Groups of >= 2 same-schema tables, sorted: tables with the same column names, joined by
    discovered union pairs only where the column map covers every column of both tables (a
    partial map would chain unrelated tables into one group)."""
    parent: dict[str, str] = {t.name: t.name for t in lake.tables}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    width = {t.name: len(t.columns) for t in lake.tables}
    for u in lake.unions:
        if u.left in parent and u.right in parent:
            full = len({a for a, _ in u.column_map}) == width[u.left] == width[u.right]
            if full and len({b for _, b in u.column_map}) == width[u.right]:
                join(u.left, u.right)
    by_cols: dict[tuple[str, ...], list[str]] = {}
    for t in lake.tables:
        if t.rows > 0:
            by_cols.setdefault(tuple(sorted(c.name.lower() for c in t.columns)), []).append(t.name)
    for names in by_cols.values():
        for n in names[1:]:
            join(names[0], n)
    groups: dict[str, list[str]] = {}
    for t in lake.tables:
        if t.rows > 0:
            groups.setdefault(find(t.name), []).append(t.name)
    return sorted(sorted(g) for g in groups.values() if len(g) >= 2)


_TOKEN = re.compile(r"\d+|[A-Za-z]+|[^\W\d_A-Za-z]|[\W_]+")


def family_tokens(names: Sequence[str]) -> tuple[str, list[str]] | None:
    """(stem, varying part of each name): the names less their common leading and trailing
    tokens (digit runs, words, single CJK characters, separators), e.g. ``sales_2021`` ->
    ``("sales", ["2021", ...])``; ``None`` when nothing varies or nothing is shared."""
    toks = [_TOKEN.findall(n) for n in names]
    k = 0
    while all(len(t) > k for t in toks) and len({t[k] for t in toks}) == 1:
        k += 1
    j = 0
    while all(len(t) > k + j for t in toks) and len({t[len(t) - 1 - j] for t in toks}) == 1:
        j += 1
    middles = ["".join(t[k : len(t) - j]) for t in toks]
    if k + j == 0 or any(not m for m in middles) or len(set(middles)) < len(names):
        return None
    stem = "".join(toks[0][:k]) + " " + "".join(toks[0][len(toks[0]) - j :])
    return human(stem.strip(" _")), middles


# --- aggregate queries ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Agg:
    """``SELECT AGG(measure) FROM table WHERE expr = value AND ...`` (``measure=None``: COUNT(*)).

    ``filters`` hold ``(sql expression, value, column name)``: the expression is a quoted column
    or a derived value such as the year of a date column (:func:`year_expr`).
    """

    table: str
    agg: str = "count"
    measure: ColumnProfile | None = None
    filters: tuple[tuple[str, Any, str], ...] = ()

    def sql(self) -> str:
        where = [f"{e} = {sql_lit(v)}" for e, v, _ in self.filters]
        if self.measure is None or self.agg == "count":
            sel = "COUNT(*)"
        else:
            m = self.measure
            sel = f"{self.agg.upper()}({value_sql(m, qi(m.name))})"
            if m.needs_cast:
                where.append(present_sql(m, qi(m.name)))
        tail = (" WHERE " + " AND ".join(where)) if where else ""
        return f"SELECT {sel} FROM {qi(self.table)}{tail}"

    def ask(self) -> str:
        """The explicit request words: ``the average unit price`` / ``the number of``."""
        if self.measure is None or self.agg == "count":
            return "the number of"
        return agg_words(self.agg, human(self.measure.name))

    def reveal(self) -> str:
        """What the user says when asked what they want (SELECT intent), in the words the
        questions use (:meth:`ask`): ``I want the average unit price.``, ``I just want to know
        how many there are.``. Never a column's identifier or a SQL function's name, and no
        table name either: a family's table is a scope the reply must not give away."""
        if self.measure is None or self.agg == "count":
            return "I just want to know how many there are."
        return f"I want {self.ask()}."

    def with_filter(self, col: str, value: Any, expr: str | None = None) -> Agg:
        f = (expr or qi(col), value, col)
        return Agg(self.table, self.agg, self.measure, (*self.filters, f))

    def on(self, table: str) -> Agg:
        return Agg(table, self.agg, self.measure, self.filters)

    def columns(self) -> list[str]:
        """``table.column`` of the measure and the filtered columns."""
        cols = [] if self.measure is None else [self.measure.name]
        return [f"{self.table}.{c}" for c in [*cols, *(c for _, _, c in self.filters)]]


def year_expr(c: ColumnProfile) -> str:
    """The year of a date column, as an integer."""
    return f"CAST(strftime('%Y', {qi(c.name)}) AS INTEGER)"


def intents(t: TableProfile, limit: int = 3) -> list[Agg]:
    """Candidate readings of a vague request about ``t``: aggregates of its measures and COUNT."""
    out = [Agg(t.name)]
    for m in measures(t)[:limit]:
        out += [Agg(t.name, a, m) for a in agg_names(m)]
    return out


def scope_values(
    v: Verifier, table: str, col: ColumnProfile, expr: str | None = None
) -> list[tuple[Any, int]]:
    """(value, row count) of a scope column (or ``expr`` over it), most frequent first.

    Empty when there are more than :data:`MAX_SCOPE_VALUES` values.
    """
    e = expr or qi(col.name)
    rows = v.rows(
        f"SELECT {e}, COUNT(*) FROM {qi(table)} WHERE {present_sql(col, qi(col.name))} "
        f"AND {e} IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {MAX_SCOPE_VALUES + 1}"
    )
    if not rows or len(rows) > MAX_SCOPE_VALUES:
        return []
    return [(r[0], r[1]) for r in rows]


def default_value(col: ColumnProfile, values: Sequence[Any]) -> Any:
    """The value a literal reader assumes when none is given: the latest year, else the commonest."""
    if is_year_like(col):
        nums = [x for x in values if isinstance(x, (int, float))]
        if nums:
            return max(nums)
    return values[0]


# --- surfaces (abbreviations and misspellings) -------------------------------------------------
def misspell_word(rng: random.Random, word: str) -> str:
    """``word`` with one letter swapped with the next, dropped or doubled (not the first or last
    letter; ``word`` has >= 4 letters). Two draws from ``rng``: the position, then the edit."""
    j = rng.randrange(1, len(word) - 2)
    op = rng.randrange(3)
    if op == 0:
        return word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    if op == 1:
        return word[:j] + word[j + 1 :]
    return word[: j + 1] + word[j] + word[j + 1 :]


def typo(rng: random.Random, text: str) -> str | None:
    """A one-letter misspelling (swap, drop or double) of one word of ``text`` of >= 4 letters."""
    words = text.split(" ")
    idxs = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not idxs:
        return None
    i = rng.choice(idxs)
    out = " ".join([*words[:i], misspell_word(rng, words[i]), *words[i + 1 :]])
    return None if out.casefold() == text.casefold() else out


def close_values(surface: str, values: Iterable[Any], cutoff: float = 0.7) -> list[Any]:
    """Values an agent could take ``surface`` for (difflib similarity >= cutoff), best first:
    exactly ``difflib.get_close_matches(surface, sorted(texts), n=8, cutoff=cutoff)``.

    difflib's ratio is 2*M/T with M the length of a common subsequence, so it is at most the
    Indel ratio 2*LCS/T that rapidfuzz computes in C. Texts are visited by that bound, best
    first, and the visit stops once the bound falls below the eighth best exact ratio: no text
    left can enter the top eight (ties are kept to the end, as difflib breaks them by text).
    The ratios come from ``cydifflib`` (CPython's difflib compiled with Cython: the same
    algorithm, about 3x faster; property-tested against the standard library's)."""
    by_text = {str(v): v for v in values}
    texts = sorted(by_text)
    bounds = _rf_process.extract(
        surface, texts, scorer=_rf_fuzz.ratio, score_cutoff=cutoff * 100 - 1e-6, limit=None
    )
    sm = _SequenceMatcher()  # (cydifflib: the standard library's difflib compiled, same ratios)
    sm.set_seq2(surface)
    top: list[tuple[float, str]] = []  # a min-heap of the best (ratio, text) so far
    for text, bound, _ in bounds:
        if len(top) == _CLOSE_N and bound / 100 + 1e-6 < top[0][0]:
            break
        sm.set_seq1(text)
        if sm.real_quick_ratio() >= cutoff and sm.quick_ratio() >= cutoff:
            r = sm.ratio()
            if r >= cutoff:
                (heapq.heappush if len(top) < _CLOSE_N else heapq.heappushpop)(top, (r, text))
    return [by_text[h] for _, h in heapq.nlargest(_CLOSE_N, top)]


#: How many values :func:`close_values` returns at most (``get_close_matches``' ``n``).
_CLOSE_N = 8


def shared_prefix(value: str, values: Iterable[Any]) -> tuple[str, list[str]] | None:
    """The shortest prefix (>= 3 letters) of ``value`` that >= 2 values start with and no value
    equals, with those values: an ambiguous abbreviation (``Aus`` for Austria / Australia)."""
    texts = sorted({x for x in values if isinstance(x, str)})
    low = {x.casefold() for x in texts}
    for k in range(3, len(value)):
        p = value[:k]
        if not p.strip() or not p[-1].isalnum() or p.casefold() in low:
            continue
        hits = [x for x in texts if x.casefold().startswith(p.casefold())]
        if len(hits) >= 2:
            return p, hits
        if len(hits) < 2:
            return None
    return None


def first_word(value: str) -> str | None:
    """The first word of a multi-word name, when it is a meaningful abbreviation of it."""
    words = value.split()
    if len(words) < 2:
        return None
    w = words[0].strip(",.;:")
    if len(w) < 4 or w.casefold() in _STOP or not any(ch.isalpha() for ch in w):
        return None
    return w


def distinct_answers(answers: Iterable[list[tuple] | None], stop: int | None = None) -> int:
    """How many mutually different, non-trivial answers there are (env's own comparison).

    Counting stops at ``stop`` (the rest of a lazy ``answers`` is then never run).
    """
    kept: list[list[tuple]] = []
    for a in answers:
        if a is None or is_trivial(a):
            continue
        if not any(same_answer(a, k) for k in kept):
            kept.append(a)
            if stop is not None and len(kept) >= stop:
                break
    return len(kept)


# --- task assembly ---------------------------------------------------------------------------------
@dataclass
class Made:
    """One synthesized task before numbering (the layers' common output form)."""

    utterance: str
    category: str
    gold_sql: str | None = None
    naive_sql: str | None = None
    gold_actions: list[str] = field(default_factory=list)
    naive_actions: list[str] = field(default_factory=list)
    underspecs: list[Underspec] = field(default_factory=list)
    unanswerable_kind: str | None = None
    instruction: str | None = None
    ordered: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    def task(self, lake: LakeProfile, task_id: str) -> Task:
        meta = dict(self.meta)
        said = slot_words(self.underspecs)
        if said:
            meta["slot_words"] = said
        writable = bool(self.gold_actions)
        if writable:
            meta["naive_actions"] = list(self.naive_actions or self.gold_actions)
        else:
            meta["naive_sql"] = self.naive_sql if self.naive_sql is not None else self.gold_sql
        return Task(
            id=task_id,
            db=lake.db_path.name,
            utterance=self.utterance,
            category=self.category,
            writable=writable,
            gold_sql=self.gold_sql,
            gold_actions=list(self.gold_actions),
            gold_ordered=self.ordered if self.gold_sql else None,
            answerable=self.unanswerable_kind is None,
            unanswerable_kind=self.unanswerable_kind,
            underspecs=list(self.underspecs),
            instruction=self.instruction,
            metadata=meta,
        )


def slot_words(underspecs: Iterable[Underspec]) -> dict[str, str]:
    """``{slot: words}`` for each labelled slot that the questions say in other words than its
    identifier (:func:`human`, with the data dictionary's names while synthesizing:
    ``BillingState`` -> ``billing state``). The simulator's replies say the slot so
    (``metadata["slot_words"]``, :meth:`~clarisql.envs.simulators.fixed.FixedSimulator.slot_words`);
    a slot already in words (``year``) is left out."""
    out: dict[str, str] = {}
    for u in underspecs:
        slot = u.label.slot
        if u.label.kind != "intent" and slot.strip() and slot not in out:
            words = human(slot)
            if words and words != slot:
                out[slot] = words
    return out


def state_tolerances(tasks: Iterable[Task], v: Verifier) -> None:
    """Write into each answerable read task the rounding it accepts
    (``metadata["round_digits"]``, :func:`clarisql.rewards.match.stated_round_digits` of its
    gold rows: 2 for computed numbers, 0 for stored ones); the episode scores by it."""
    from clarisql.rewards.match import stated_round_digits

    for t in tasks:
        if t.answerable and not t.writable and t.gold_sql:
            rows = v.rows(t.gold_sql)
            if rows is not None:
                t.metadata["round_digits"] = stated_round_digits(rows)


def tidy(text: str) -> str:
    """One space between words, no space before punctuation, a capital first letter; a key that
    is only the record's noun said as the record (:func:`~.phrasing.plain_key`)."""
    s = re.sub(r"\s+", " ", plain_key(text)).strip()
    s = re.sub(r"\s+([?.,:;!])", r"\1", s)
    s = _AGREE_WHAT.sub(_agree, s)
    s = _AGREE_WHOSE.sub(_agree, s)
    return s[:1].upper() + s[1:]


#: "What is the address details of ..." and "whose address details is ...": the verb agrees
#: with the noun phrase's last word
_AGREE_WHAT = re.compile(r"\b(?P<lead>[Ww]hat )is(?P<np> the [A-Za-z' ]+?)(?= (?:of|for) )")
_AGREE_WHOSE = re.compile(r"\b(?P<lead>whose )(?P<np>[A-Za-z' ]+?) is(?= )")


def plural_phrase(words: str) -> bool:
    """Whether a noun phrase's head is plural (``address details``, ``pages``; not ``status``,
    ``address``, ``number of reviews``): the verb after it is "are"."""
    ws = re.split(r" (?:of|for) ", words.strip(), maxsplit=1)[0].split()
    return bool(ws) and singular(ws[-1]) != ws[-1]


def _agree(m: re.Match[str]) -> str:
    plural = plural_phrase(m["np"])
    if m.re is _AGREE_WHAT:
        return f"{m['lead']}{'are' if plural else 'is'}{m['np']}"
    return f"{m['lead']}{m['np']} {'are' if plural else 'is'}"


def spread(n: int, parts: int) -> list[int]:
    """``n`` split into ``parts`` near-equal shares, the larger ones first."""
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def fill(
    n: int,
    makers: Sequence[Any],
    seen: set[str],
    budget: int | None = None,
) -> list[Made]:
    """Call ``makers`` round-robin until ``n`` tasks are made or every maker keeps failing.

    A maker returns a :class:`Made` or ``None`` (the data did not allow it this time); a maker
    that fails ``budget`` times in a row is retired, so a database that cannot give a kind yields
    fewer tasks instead of looping. Utterances already in ``seen`` are rejected (and added), and
    so is one no question may hold (:func:`~clarisql.envs.synth.phrasing.wording_flaw`: a
    noun said twice over, table or query words, a noun in the wrong number).
    The default budget is 30 failures in a row for a maker that has made nothing yet, and twice
    that once it has made a task: a recipe that succeeds one time in twelve (a misspelled name
    that several values fit) makes its first task with probability 0.93 (0.88 with 25) and is
    then rarely retired by a bad run.
    """
    budget = budget or 30
    fails = [0] * len(makers)
    out: list[Made] = []
    i = 0
    made = [False] * len(makers)

    def live(k: int) -> bool:
        return fails[k] < budget * (2 if made[k] else 1)

    while len(out) < n and any(live(k) for k in range(len(makers))):
        k = i % len(makers)
        i += 1
        if not live(k):
            continue
        m = makers[k]()
        if m is None or m.utterance in seen or wording_flaw(m.utterance):
            fails[k] += 1  # ("the address of the address", "which invoices row")
            continue
        fails[k], made[k] = 0, True
        seen.add(m.utterance)
        out.append(m)
    return out


def top_up(out: list[Made], makers: Sequence[Any], n: int, seen: set[str]) -> list[Made]:
    """Fill ``out`` up to ``n`` one task per maker at a time, round-robin, retiring a maker when
    it can make no more: a kind the data could not fill leaves its share to the others."""
    live = list(makers)
    while len(out) < n and live:
        for make in list(live):
            more = fill(1, [make], seen)
            if not more:
                live.remove(make)
            out += more
            if len(out) >= n:
                break
    return out


__all__ = [
    "AGG_WORDS",
    "Agg",
    "Made",
    "close_values",
    "default_value",
    "shared_prefix",
    "year_expr",
    "distinct_answers",
    "entities",
    "families",
    "family_tokens",
    "fill",
    "first_word",
    "human",
    "id_like_name",
    "intents",
    "is_entity",
    "is_scope",
    "is_year_like",
    "measures",
    "scope_values",
    "scopes",
    "show",
    "slot_words",
    "spread",
    "top_up",
    "sql_lit",
    "tidy",
    "typo",
]
