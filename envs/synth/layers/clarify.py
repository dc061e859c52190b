"""ODUTQA-MDC's clarification layer: underspecified read tasks for any database.

Every task is one aggregate question (:class:`~.common.Agg`) with up to three parts made unclear:
- ``intent`` (SELECT): the question asks for "the key figure" without saying which; the
  candidates are COUNT and AVG/SUM/MAX/MIN of the table's measures. The user reveals the one meant.
- scope (FROM) over a scoping dimension: a scope column (a year, a region, a category) or a family
  of same-schema tables (one per year...). ``Missing``: the question says one scope is meant but
  not which (slot = the column name, ``year`` or ``table`` for a family); ``Error``: the scope value
  is misspelled (text values); ``Unmatch``: the value is outside the data (a year with no rows or
  no table).
- ``not-exist`` (WHERE): a name is cut short or misspelled.
``mixed`` tasks combine two or three of these.

What is wrong with a written value is what the free-text gate asks a question to state
(:func:`~clarisql.envs.simulators.gate.kinds.value_problem`): *cut short* (``partial``: the
meant value contains the surface: its first words, a left-out last word, a word cut off
mid-way) or *misspelled* (``wrong``: one letter swapped, dropped or doubled, in a name of one
word or of many). Names (``not-exist``, lookups, drafted names) and text scope values
(``Error``) each take the problem made less often so far (:meth:`_ClarifyGen.want`), so the two
are about equally common for both kinds, at every word count: neither the kind nor the look of
the surface (one word, a dictionary word, a number of words) tells which problem it has; the
data does (``LIKE '%X%'`` finds several values, or none).

A name that one row holds is one entity: an aggregate over it is no question, so ``where:lookup``
asks instead for one attribute of *the* entity ("What is the price of the product whose name is
"blue"?", :data:`~clarisql.envs.synth.phrasing.ATTR_OF_RECORD`), its readings the one-row names
the surface fits (:meth:`_ClarifyGen.lookup`); the aggregates keep the names many rows hold.

Checks, each on the data (so clarifying is necessary, not decorative):
- the gold query returns a non-trivial answer, the literal reading (``metadata["naive_sql"]``:
  the default intent COUNT, the default scope - the latest year or the commonest value - or the
  nearest existing year, the name exactly as written) runs, and its answer differs from the gold
  under the environment's own comparison;
- exploring the database cannot settle any unclear part: the readings that drop an unclear
  filter (every scope value or every name at once, each alone and both together; a family's
  literal table) give a different answer than the gold, and for each part >= 2 of its readings
  give different answers (intent: the candidate aggregates; scope and name: below);
- no explorer beats a guess (:mod:`clarisql.envs.explorers`): a scope or name part's readings
  come from what the user wrote and *every* value an agent could find (all the scope values;
  every value of the name column, read with one query), never from the gold, the literal reading
  left out. Readings an agent could rule out by running them (an empty or zero answer, the
  literal reading's answer, the answer without the unclear filter) do not count, and the gold
  is held to the same test; >= 2 of the rest must give different answers, and the gold is drawn
  uniformly among the readings (the first of a shuffled list that passes the checks), then kept
  so that it is uniform over their distinct answers (:meth:`_ClarifyGen.keep_by_answer`: an
  agent that runs every reading and answers the commonest result is no better than a guess). A
  misspelling with one nearest value, or a cut-off with one completion, has one reading: not a
  clarification task; nearest, prefix, first row, most frequent, "the second-latest year" or
  "anything but the nearest" is right on at most 1/|readings| of the parts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clarisql.envs.explorers import (
    answer_groups,
    containing,
    contains,
    draw,
    fitting,
    levenshtein,
    readings,
    related,
)
from clarisql.envs.synth.discover import _timestamp
from clarisql.envs.synth.layers.common import (
    _ID_NAME,
    Agg,
    Made,
    entities,
    families,
    family_tokens,
    fill,
    human,
    intents,
    is_year_like,
    measures,
    qi,
    scope_values,
    scopes,
    show,
    spread,
    sql_lit,
    tidy,
    top_up,
    year_expr,
)
from clarisql.envs.synth.layers.drafted import drafted_tasks
from clarisql.envs.synth.layers.surfaces import (
    PARTIAL,
    TYPO_TRIES,
    WRONG,
    begins_alike,
    cut_offs,
    listed,
    misnamed,
    misspellings,
    problem_of,
)
from clarisql.envs.synth.names import speakable
from clarisql.envs.synth.phrasing import (
    AGGREGATE,
    ATTR_OF_RECORD,
    COUNT,
    FILTER,
    YEAR,
    key_words,
    pick,
    plural,
    singular,
)
from clarisql.envs.synth.profile import present_sql
from clarisql.envs.synth.types import ColumnProfile, Draft, LakeProfile, TableProfile
from clarisql.envs.synth.value_index import ValueIndexes
from clarisql.envs.synth.verify import Verifier, is_trivial, same_answer
from clarisql.envs.tasks import Label, Task, Underspec

#: seed values a clarification tries per column: a surface must begin as every value it fits
#: does (a cut-off the start of each, a made-up name sharing their head), which fewer seeds allow
NAME_SEEDS = 24

#: The recipes, in the order their shares are filled: (intent, scope kind, not-exist).
RECIPES: dict[str, tuple[bool, str | None, bool]] = {
    "select": (True, None, False),
    "from:Missing": (False, "Missing", False),
    "from:Error": (False, "Error", False),
    "from:Unmatch": (False, "Unmatch", False),
    "where": (False, None, True),
    "where:lookup": (False, None, True),
    "mixed:intent+Missing": (True, "Missing", False),
    "mixed:intent+not-exist": (True, None, True),
    "mixed:Missing+not-exist": (False, "Missing", True),
    "mixed:intent+Unmatch": (True, "Unmatch", False),
    "mixed:Error+not-exist": (False, "Error", True),
}

#: the answerable aggregates' frames (one pool: :mod:`clarisql.envs.synth.phrasing`)
_EXPLICIT, _COUNT, _FILTER, _YEAR_PHRASE = AGGREGATE, COUNT, FILTER, YEAR
_VAGUE = (
    "What's the key figure for {subj}{f}?",
    "Give me the main number on {subj}{f}.",
    "How do {subj}{f} look in numbers?",
    "What do the numbers say about {subj}{f}?",
    "I need a quick figure on {subj}{f}.",
)
_MISSING = (
    "I'm looking at one particular {slot}. ",
    "For the {slot} I'm working on, ",
    "Thinking of one specific {slot}: ",
)
_MISSING_TABLE = (
    "I mean one of the tables like {example}. ",
    "There are several tables like {example}; I mean one of them. ",
)
#: Recipe weights for the shares (:func:`clarify_tasks`): recipes with a written value (a name,
#: a scope value) weigh more, so a suite carries enough value clarifications to measure.
WEIGHTS: dict[str, int] = {
    "select": 1,
    "from:Missing": 2,
    "from:Error": 3,
    "from:Unmatch": 2,
    "where": 3,
    "where:lookup": 3,
    "mixed:intent+Missing": 1,
    "mixed:intent+not-exist": 2,
    "mixed:Missing+not-exist": 2,
    "mixed:intent+Unmatch": 1,
    "mixed:Error+not-exist": 2,
}
#: how far one problem may lead the other per role before only the other is tried
MAX_LEAD = 3
#: Different readings counted per unclear part before the count stops (>= 2 are required);
#: ``metadata["candidates"]`` holds these counts.
STOP = 3
#: Readings run per unclear part to group them by answer (:meth:`_ClarifyGen.keep_by_answer`);
#: a part with more runs the gold and a uniform sample of the others.
MAX_READINGS = 60


@dataclass
class _Scope:
    """One scoping dimension: a column (or the year of a date column) of a table, or a family."""

    slot: str
    values: list[Any]  # column values, or family values (years or table names)
    tables: list[str]  # one table (column scope) or the family's tables (aligned with values)
    column: ColumnProfile | None = None
    expr: str | None = None  # SQL for the scope value (column scopes)
    year_like: bool = False
    stem: str = ""
    plain: bool = False  # the table's only time dimension: "in 2010" says which column

    def agg(self, base: Agg, value: Any) -> Agg:
        if self.column is not None:
            return base.with_filter(self.column.name, value, self.expr)
        return base.on(self.tables[self.values.index(value)])


def _quote(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else show(v)


class _ClarifyGen:
    def __init__(self, lake: LakeProfile, v: Verifier, rng: random.Random):
        self.lake, self.v, self.rng = lake, v, rng
        self.tables = [  # (link and mirror tables are no subject: lake.non_subjects)
            t for t in lake.tables if t.rows > 0 and t.usable() and lake.is_subject(t.name)
        ]
        self._cache: dict[str, list[tuple] | None] = {}
        self._values = ValueIndexes(v)  # each name column read once (reach_sql from memory)
        self._fits: dict[tuple[str, str, str], list[Any] | None] = {}
        #: the made-up names (:func:`misnamed`) :meth:`value_surface` gave out
        self.made_up: set[str] = set()
        self.family_scopes = self._family_scopes()
        # written values made so far, per role (a name, a scope value) and problem
        self.made_problems: dict[tuple[str, str], int] = {}
        self.golds: set[str] = set()
        self.rejected = False  # the last gold was dropped by chance (keep_by_answer)

    def want(self, role: str) -> str:
        """The problem the next written ``role`` value (``name`` or ``scope``) gets: the one
        made less often so far (a tie drawn at random), so both are about equally common."""
        a, b = (self.made_problems.get((role, p), 0) for p in (PARTIAL, WRONG))
        if a == b:
            return self.rng.choice((PARTIAL, WRONG))
        return PARTIAL if a < b else WRONG

    def problems(self, role: str) -> tuple[str, ...]:
        """The problems to try, in order, for the next written ``role`` value: :meth:`want`'s,
        then the other one while it leads by less than :data:`MAX_LEAD` (so a column that can
        give only one problem still yields a few tasks, and the two stay balanced)."""
        want = self.want(role)
        other = WRONG if want == PARTIAL else PARTIAL
        lead = self.made_problems.get((role, other), 0) - self.made_problems.get((role, want), 0)
        return (want, other) if lead < MAX_LEAD else (want,)

    def noted(self, made: Made | None) -> Made | None:
        """``made``, its written values counted for :meth:`want`; ``None`` for a question made
        before (counting it would skew the balance). A question is its literal reading (the
        naive query, which the gold does not decide), not its gold: one task per gold would
        keep asking a question until each of its readings had been its gold once, so the
        suite's golds would drift back to uniform over the readings, not their answers
        (:meth:`keep_by_answer`)."""
        key = made and " ".join(
            (made.meta.get("recipe", ""), *(made.naive_sql or made.utterance).split())
        )
        if made is None or key in self.golds:
            return None
        self.golds.add(key)
        for u in made.underspecs:
            role = {"not-exist": "name", "Error": "scope"}.get(u.label.kind)
            if role is not None:
                key = (role, problem_of(u.label.content, u.value))
                self.made_problems[key] = self.made_problems.get(key, 0) + 1
        return made

    def value_surface(
        self, gold: str, vals: list[str], problem: str
    ) -> tuple[str, list[str]] | None:
        """``gold`` written with ``problem`` (``partial``: cut short, :func:`cut_offs`;
        ``wrong``: misspelled, :func:`misspellings`, or misremembered, :func:`misnamed`, each
        half the time) so that >= 2 of ``vals`` fit the surface (for a misremembered name,
        which fits none, the values it could be made from: a shared word or half),
        ``gold`` among them, and the surface has that problem for every value it fits (the
        readings of a cut-off all contain it; a misspelling's are within a typo's reach and
        contain it not): (surface, the values of ``vals`` it fits)."""
        known = {str(x).casefold() for x in vals}
        pool = vals
        if problem == PARTIAL:
            tries = cut_offs(self.rng, gold)
        elif self.rng.random() < 0.5:  # misremembered: a name the data lacks, nothing fits
            for surface in misnamed(self.rng, gold, [v for v in vals if v != gold]):
                if surface.casefold() in known or containing(surface, vals):
                    continue
                if fitting(surface, vals) is None:
                    # its readings: the values it could be made from (a shared word or half),
                    # each beginning as the surface does (never "Gutincis" for Francis)
                    fit = related(surface, vals)
                    if gold in fit and len(fit) >= 2 and all(begins_alike(surface, x) for x in fit):
                        self.made_up.add(surface)
                        return surface, fit
            return None
        else:
            # a misspelling is within two edits of a value only if the value is within three of
            # the name: the typo-reach readings are among these (contains() still reads all)
            g = gold.casefold()
            pool = [v for v in vals if levenshtein(g, str(v).casefold(), 3) <= 3]
            if len(pool) < 2:
                return None
            tries = misspellings(gold)
            self.rng.shuffle(tries)
            tries = tries[:TYPO_TRIES]
        for surface in tries:
            if surface.casefold() in known or problem_of(surface, gold) != problem:
                continue
            if problem == WRONG and containing(surface, vals):
                continue  # a value holds it: cut short by the data, not misspelled
            fit = fitting(surface, pool)
            if not fit or gold not in fit or len(fit) < 2:
                continue
            # a cut-off is ambiguous as a prefix too: "INSECTS" with one title that starts
            # with it (and another that holds it later) reads as that one title
            # and a cut-off keeps the start of every value it fits: "Back" is no way to write
            # "Holding Back The Years" (the gold is drawn among all of them)
            low = surface.casefold()
            if problem == PARTIAL and not all(str(v).casefold().startswith(low) for v in fit):
                continue
            return surface, fit
        return None

    def rows(self, sql: str) -> list[tuple] | None:
        if sql not in self._cache:
            self._cache[sql] = self.v.rows(sql)
        return self._cache[sql]

    def window(self, table_sql: str, base: str, offset: int) -> list[tuple] | None:
        """``self.rows(f"{base} ORDER BY 1 LIMIT 150 OFFSET {offset}")`` for a ``SELECT
        DISTINCT`` statement over ``table_sql``, sliced from one sorted read
        (:meth:`~clarisql.envs.synth.value_index.ValueIndexes.window`)."""
        return self._values.window(table_sql, base, 150, offset)

    # --- scoping dimensions ---------------------------------------------------------------------
    def _family_scopes(self) -> list[_Scope]:
        out = []
        for fam in families(self.lake):
            got = family_tokens(fam)
            if got is None:
                continue
            stem, tokens = got
            years = all(t.isdigit() and 1900 <= int(t) <= 2100 for t in tokens)
            values: list[Any] = [int(t) for t in tokens] if years else list(fam)
            slot = "year" if years else "table"
            out.append(_Scope(slot, values, list(fam), year_like=years, stem=stem, plain=years))
        return out

    def column_scopes(self, t: TableProfile, kind: str | None) -> list[_Scope]:
        """The table's scope columns (and the years of its date columns) fit for ``kind``."""
        cands: list[tuple[ColumnProfile, str | None, str, bool]] = [
            (c, None, c.name, is_year_like(c)) for c in scopes(t)
        ]
        dates = [c for c in t.usable() if c.kind == "date"]
        # "the year" names a column only when the table has one time dimension; otherwise the
        # slot says which ("InvoiceDate year") and the question never says just "in 2010"
        plain = len(dates) + sum(year for *_, year in cands) == 1
        cands += [(c, year_expr(c), "year" if plain else f"{c.name} year", True) for c in dates]
        out = []
        for c, expr, slot, year in cands:
            if kind == "Unmatch" and not (year and (expr or c.kind == "integer")):
                continue
            if kind == "Error" and (year or c.kind != "text"):
                continue
            out.append(_Scope(slot, [], [t.name], c, expr, year, plain=year and plain))
        return out

    def column_scope(self, t: TableProfile, kind: str | None) -> _Scope | None:
        cols = self.column_scopes(t, kind)
        if not cols:
            return None
        sc = self.rng.choice(cols)
        sc.values = [val for val, _ in scope_values(self.v, t.name, sc.column, sc.expr)]
        return sc if len(sc.values) >= 2 else None

    def pick_scope(self, kind: str, t: TableProfile) -> _Scope | None:
        fams = [
            f
            for f in self.family_scopes
            if kind == "Missing" or (kind == "Unmatch" and f.slot == "year")
        ]
        if fams and self.rng.random() < 0.4:
            return self.rng.choice(fams)
        return self.column_scope(t, kind)

    # --- the parts --------------------------------------------------------------------------------
    def scope_part(self, sc: _Scope, kind: str) -> tuple[list[Any], Any, Any] | None:
        """(gold values to try: the readings in a uniformly random order, the literal reading's
        value, the surface the user says). The readings are every scope value the surface
        fits (all of them for a Missing scope or a year outside the data), the literal left out
        (:func:`~clarisql.envs.explorers.readings`)."""
        rng, vals = self.rng, sc.values
        if kind == "Missing":
            nums = [x for x in vals if isinstance(x, (int, float))]
            naive = max(nums) if sc.year_like and nums else vals[0]
            reads = readings(None, vals, naive)
            return (draw(rng, reads), naive, None) if len(reads) >= 2 else None
        if kind == "Error":
            texts = [x for x in vals if isinstance(x, str)]
            if not texts:
                return None
            rng.shuffle(texts)
            # cut short or misspelled, each about half the time
            for problem, seed in [
                (p, x) for p in self.problems("scope") for x in texts[:NAME_SEEDS]
            ]:
                got = self.value_surface(seed, texts, problem)
                if got is not None and len(reads := readings(got[0], vals)) >= 2:
                    # the literal reading filters on the surface as written
                    return draw(rng, reads), got[0], got[0]
            return None
        nums = sorted(x for x in vals if isinstance(x, int))
        if len(nums) < 2:
            return None
        u = nums[-1] + rng.randint(1, 4) if rng.random() < 0.6 else nums[0] - rng.randint(1, 4)
        nearest = min(nums, key=lambda x: (abs(x - u), -x))
        reads = readings(str(u), nums, nearest)
        return (draw(rng, reads), nearest, u) if len(reads) >= 2 else None

    def entity_part(
        self,
        t: str,
        col: ColumnProfile,
        scope_filter: tuple[str, Any] | None,
        min_rows: int = 1,
        one_row: bool = False,
    ) -> tuple[str, str, list[str]] | None:  # (gold value, surface, readings)
        """A name written unclearly: a surface made from a value of the column (cut short or
        misspelled, :meth:`name_surface`), the readings it fits among *every* value of the column, and a gold
        drawn uniformly among them (:mod:`clarisql.envs.explorers`). With ``min_rows`` > 1 (an
        aggregate over "the rows of" the name) a reading is a value that many rows hold (within
        the scope): a name of one row is one entity, and an aggregate over it is no question a
        user asks (they mean every row the surface fits, a reading needing no clarification).
        With ``one_row`` (a singular lookup of "the {entity} called ...") a reading is a value
        that exactly one row holds: each reading is one distinct entity."""
        rng = self.rng
        where = present_sql(col, qi(col.name))
        if scope_filter is not None:
            where += f" AND {scope_filter[0]} = {sql_lit(scope_filter[1])}"
        base = f"SELECT DISTINCT {qi(col.name)} FROM {qi(t)} WHERE {where}"
        offset = rng.randrange(max(1, col.distinct - 150))
        vals = [r[0] for r in self.window(qi(t), base, offset) or []]
        vals = [x for x in vals if isinstance(x, str)]
        if not vals or listed(vals):
            return None
        order = list(vals)
        rng.shuffle(order)
        tries = [(p, seed) for p in self.problems("name") for seed in order[:NAME_SEEDS]]
        for problem, seed in tries:
            got = self.name_surface(seed, vals, base, col, problem)
            if got is None:
                continue
            surface = got[0]
            reads = self.column_readings(t, col.name, surface)
            if min_rows > 1 or one_row:
                reads = self.held_by_many(t, col, reads, scope_filter, min_rows, one_row)
            if seed in reads and len(reads) >= 2 and self.begins_every(surface, reads):
                break
        else:
            return None
        exists = self.rows(
            f"SELECT COUNT(*) FROM {qi(t)} WHERE {qi(col.name)} = {sql_lit(surface)} COLLATE NOCASE"
        )
        if exists is None or exists[0][0]:
            return None
        return rng.choice(reads), surface, reads  # uniform over the readings

    def begins_every(self, surface: str, reads: list[Any]) -> bool:
        """Whether every reading of ``surface`` (over the whole column) begins as a user who
        meant it would write it: a cut-off is the start of each, a made-up name
        (:func:`~.surfaces.misnamed`) begins as each does (:func:`~.surfaces.begins_alike`);
        a misspelling is within a typo's reach of each already."""
        low = surface.casefold()
        if all(contains(surface, x) for x in reads):
            return all(str(x).casefold().startswith(low) for x in reads)
        if surface in self.made_up:
            return all(begins_alike(surface, x) for x in reads)
        return True

    def held_by_many(
        self,
        t: str,
        col: ColumnProfile,
        values: list[Any],
        scope_filter: tuple[str, Any] | None,
        min_rows: int,
        one_row: bool = False,
    ) -> list[Any]:
        """The values of ``values`` that at least ``min_rows`` rows of ``t`` hold (exactly one
        row with ``one_row``; counted on the data, within the scope filter)."""
        if not values:
            return []
        where = f"{qi(col.name)} IN ({', '.join(sql_lit(x) for x in values)})"
        if scope_filter is not None:
            where += f" AND {scope_filter[0]} = {sql_lit(scope_filter[1])}"
        got = self.rows(f"SELECT {qi(col.name)}, COUNT(*) FROM {qi(t)} WHERE {where} GROUP BY 1")
        many = {x for x, n in got or [] if (n == 1 if one_row else n >= min_rows)}
        return [x for x in values if x in many]

    def name_surface(
        self,
        gold: str,
        vals: list[str],
        base: str,
        col: ColumnProfile,
        problem: str | None = None,
    ) -> tuple[str, list[str]] | None:
        """``gold`` cut short or misspelled (``problem``, else :meth:`want`'s) so that >= 2
        names fit it (:meth:`value_surface`). ``base`` and ``col`` name the column queried."""
        return self.value_surface(gold, vals, problem or self.want("name"))

    # --- one task -----------------------------------------------------------------------------------
    def compose(self, recipe: str) -> Made | None:
        """One task of ``recipe`` (``None`` when the data did not allow it this time)."""
        return self.noted(self.lookup() if recipe == "where:lookup" else self._compose(recipe))

    def _compose(self, recipe: str) -> Made | None:
        intent, scope_kind, not_exist = RECIPES[recipe]
        rng = self.rng
        fams = bool(self.family_scopes) and scope_kind in ("Missing", "Unmatch")
        need = [
            t
            for t in self.tables
            if (not intent or measures(t))
            and (not not_exist or entities(t))
            and (not scope_kind or fams or self.column_scopes(t, scope_kind))
        ]
        if not need:
            return None
        t = rng.choice(need)
        sc = self.pick_scope(scope_kind, t) if scope_kind else None
        if scope_kind and sc is None:
            return None
        if sc is not None and sc.column is None:  # a family: its first table stands for all
            t = self.lake.table(sc.tables[0])
            if (intent and not measures(t)) or (not_exist and not entities(t)):
                return None
        part = self.scope_part(sc, scope_kind) if sc is not None and scope_kind else None
        if scope_kind and part is None:
            return None
        if part is None:
            return self.finish(recipe, t, sc, None)
        for g in part[0][:4]:  # the first gold value whose reading the checks accept
            self.rejected = False
            made = self.finish(recipe, t, sc, (g, part[1], part[2]))
            if made is not None or self.rejected:  # a gold dropped by chance ends the draw
                return made  # (the next in the list would bias it: keep_by_answer)
        return None

    def finish(
        self, recipe: str, t: TableProfile, sc: _Scope | None, sp: tuple[Any, Any, Any] | None
    ) -> Made | None:
        intent, scope_kind, not_exist = RECIPES[recipe]
        rng = self.rng
        gold_table = sc.tables[sc.values.index(sp[0])] if sc and sc.column is None else t.name
        gold_t = self.lake.table(gold_table)
        cands = [a.on(gold_table) for a in intents(gold_t)]
        if intent and len(cands) < 2:
            return None
        # a table without measures still counts its rows: scope and name parts need no measure
        gi = rng.randrange(len(cands)) if len(cands) > 1 else 0
        ni = 0 if gi != 0 else min(1, len(cands) - 1)
        base_g, base_n = cands[gi], (cands[ni] if intent else cands[gi])
        ent = None
        if not_exist:
            ecol = rng.choice(entities(gold_t))
            sfilter = (sc.expr or qi(sc.column.name), sp[0]) if sc and sc.column else None
            ent_part = self.entity_part(gold_table, ecol, sfilter, min_rows=2)
            if ent_part is None:
                return None
            ent = (ecol, *ent_part)
        extra = None
        if not scope_kind and rng.random() < 0.5:  # an explicit, well-specified scope filter
            plain = self.column_scope(gold_t, None)
            if plain is not None:
                extra = (plain, rng.choice(plain.values))

        def build(base: Agg, scope_val: Any, ent_val: Any, drop: tuple[str, ...] = ()) -> Agg:
            a = base
            if extra is not None:
                a = extra[0].agg(a, extra[1])
            if sc is not None and not ("scope" in drop and sc.column is not None):
                a = sc.agg(a, scope_val) if (sc.column is not None or scope_val in sc.values) else a
            if ent is not None and "name" not in drop:
                a = a.with_filter(ent[0].name, ent_val)
            return a

        g_scope = sp[0] if sp else None
        n_scope = sp[1] if sp else None
        if sc is not None and sc.column is None and n_scope not in sc.values:
            return None  # a family's literal reading must name a table that exists
        gold = build(base_g, g_scope, ent[1] if ent else None)
        if ent is not None or scope_kind in ("Error", "Unmatch"):
            # a value clarified to a filter that one row passes: an aggregate over one row is no
            # question a user asks (they mean every row the words fit, needing no clarification)
            n = self.rows(build(Agg(gold_table), g_scope, ent[1] if ent else None).sql())
            if not n or not isinstance(n[0][0], int) or n[0][0] < 2:
                return None
        naive = build(base_n, n_scope, ent[2] if ent else None)
        g_sql, n_sql = gold.sql(), naive.sql()
        self.v.prefetch([g_sql, n_sql])  # both at once on the verifier's worker threads
        ga, na = self.rows(g_sql), self.rows(n_sql)
        if ga is None or na is None or is_trivial(ga) or same_answer(ga, na):
            return None
        parts = [p for p, on in (("scope", sc is not None), ("name", ent is not None)) if on]
        g_ent = ent[1] if ent else None
        if self.settled_by_all(
            ga, parts, lambda d: build(base_g, n_scope if "scope" in d else g_scope, g_ent, d)
        ):
            return None
        # clarifying is necessary: every unclear part keeps >= 2 readings with different answers
        e1 = ent[1] if ent else None
        parts_sql: dict[str, list[str]] = {}
        against: dict[str, list[str]] = {}  # answers an agent would rule a reading out by
        if intent:  # the gold and the literal reading first: their answers are cached
            order = [cands[gi], cands[ni], *(c for i, c in enumerate(cands) if i not in (gi, ni))]
            parts_sql["intent"] = [build(c, g_scope, e1).sql() for c in order]
        if sc is not None and sp is not None:
            # the readings, from the surface and every scope value (module docstring)
            surface = None if scope_kind == "Missing" else show(sp[2])
            keep = readings(surface, sc.values, None if scope_kind == "Error" else sp[1])
            if sp[0] not in keep or len(keep) < 2:
                return None
            keep = self.sample(sp[0], keep)
            if keep is None:
                return None
            parts_sql["scope"] = [build(base_g, x, e1).sql() for x in keep]
            against["scope"] = [
                build(base_g, n_scope, e1).sql(),
                build(base_g, n_scope, e1, ("scope",)).sql(),
            ]
        if ent is not None:
            keep = ent[3]  # the name's readings over the whole column (entity_part)
            if len(keep) < 2:
                return None
            keep = self.sample(ent[1], keep)
            if keep is None:
                return None
            parts_sql["name"] = [build(base_g, g_scope, x).sql() for x in keep]
            against["name"] = [
                build(base_g, g_scope, ent[2]).sql(),
                build(base_g, g_scope, None, ("name",)).sql(),
            ]
        self.v.prefetch(q for qs in (*parts_sql.values(), *against.values()) for q in qs)
        checks: dict[str, int] = {}
        for k, qs in parts_sql.items():
            # each part's gold uniform over its readings' distinct answers (keep_by_answer)
            if k == "intent":
                got = [a for a in (self.rows(q) for q in qs) if a is not None and not is_trivial(a)]
                n = self.keep_by_answer(got)
            else:
                n = self.fair_answers(qs, against[k])
            if n is None:
                return None
            checks[k] = n
        return self.render(recipe, gold, naive, base_g, gold_t, sc, sp, ent, extra, checks)

    def lookup(self, table: str | None = None, column: str | None = None) -> Made | None:
        """A single entity named unclearly (ODUTQA-MDC's abbreviated enterprise name): "What is
        the unit price of the product called 'blue'?". The readings are the names the surface
        fits that one row each holds (distinct entities, :meth:`entity_part` with ``one_row``),
        the gold drawn uniformly among them; the question is a singular lookup of one attribute
        of that entity, never an aggregate (an aggregate over one row is no question a user
        asks). The same checks as the aggregates: >= 2 readings an agent cannot rule out by
        running them give different answers, and dropping the name does not give the gold.
        ``table`` and ``column`` fix the entity's table and name column (a drafted name that one
        row holds, :mod:`.drafted`)."""
        rng = self.rng
        need = [t for t in self.tables if entities(t) and t.rows >= 2]
        if table is not None:
            need = [t for t in need if t.name == table]
        if not need:
            return None
        t = rng.choice(need)
        ents = [c for c in entities(t) if column is None or c.name == column]
        if not ents:
            return None
        ecol = rng.choice(ents)
        # the attribute asked for: a measure, a date, or another name of the entity
        attrs = [
            c
            for c in (
                *measures(t),
                *(c for c in t.usable() if c.kind == "date"),
                *entities(t),
                *(  # a short text fact of the entity (a phone, a postal code)
                    c
                    for c in t.usable()
                    if c.kind == "text"
                    and not c.low_information
                    and speakable(c.name)
                    and not _ID_NAME.search(c.name)
                    and all(len(str(x)) <= 40 for x in c.samples)
                ),
            )
            if c.name != ecol.name
            and not _timestamp(c)  # a time the database keeps (last_update) is no fact asked for
            and singular(human(c.name)) != singular(human(t.name))  # "the address of the address"
        ]
        attrs = list({c.name: c for c in attrs}.values())
        if not attrs:
            return None
        m = rng.choice(attrs)
        got = self.entity_part(t.name, ecol, None, one_row=True)
        if got is None:
            return None
        gold_v, surface, reads = got

        def q(v: Any | None) -> str:
            where = f"{qi(m.name)} IS NOT NULL"
            if v is not None:
                where = f"{qi(ecol.name)} = {sql_lit(v)} AND {where}"
            return f"SELECT {qi(m.name)} FROM {qi(t.name)} WHERE {where}"

        g_sql, n_sql = q(gold_v), q(surface)
        ga, na = self.rows(g_sql), self.rows(n_sql)
        if ga is None or na is None or len(ga) != 1 or is_trivial(ga) or same_answer(ga, na):
            return None
        if same_answer(ga, self.rows(q(None))):  # every row reads the same: nothing to ask
            return None
        reads = self.sample(gold_v, reads)
        n_answers = self.fair_answers(
            None if reads is None else [q(x) for x in reads], [n_sql, q(None)]
        )
        if n_answers is None:
            return None
        text = pick(
            ATTR_OF_RECORD,
            rng,
            attr=human(m.name),
            subj=singular(human(t.name)),
            key=key_words(human(ecol.name), singular(human(t.name))),
            v=_quote(surface),
        )
        return Made(
            utterance=tidy(text),
            category="where",
            gold_sql=g_sql,
            naive_sql=n_sql,
            underspecs=[Underspec(Label("not-exist", surface, ecol.name), gold_v)],
            meta={
                "layer": "clarify",
                "recipe": "where:lookup",
                "difficulty": "simple",
                "qtype": "single",
                "tables": [t.name],
                "columns": [m.name, ecol.name],
                "operations": ["filter"],
                "scope_source": None,
                "candidates": {"name": n_answers},
            },
        )

    def sample(self, gold: Any, reads: list[Any]) -> list[Any] | None:
        """The gold and every other reading (all are run: :meth:`keep_by_answer` groups them
        by answer); beyond :data:`MAX_READINGS`, the gold and a uniform sample of the others
        (the answers' shares in a uniform sample are those of every reading, so the commonest
        answer of all is the gold's no more often than a guess among the answers)."""
        others = [x for x in reads if x != gold]
        if len(others) >= MAX_READINGS:
            others = self.rng.sample(others, MAX_READINGS - 1)
        return [gold, *others]

    def keep_by_answer(self, answers: list[list[tuple]]) -> int | None:
        """Whether the gold (``answers[0]``, the open readings' answers after it) is kept: the
        number of distinct answers (at most :data:`STOP`), ``None`` to drop it. An agent that
        runs every reading and answers the commonest result must be right no more often than
        a guess among the distinct answers (:func:`~clarisql.envs.explorers.answer_picks`), so
        the gold must be uniform over the answers, then over the readings giving it; a gold
        drawn uniformly over the readings is kept with probability ``smallest group / the
        gold's group`` (rejection sampling: exactly that law). Needs >= 2 answers."""
        groups = answer_groups(answers, same_answer)
        if len(groups) < 2:
            return None
        own = len(next(g for g in groups if 0 in g))
        least = min(len(g) for g in groups)
        if least < own and self.rng.random() >= least / own:
            self.rejected = True
            return None
        return min(len(groups), STOP)

    def fair_answers(self, qs: list[str] | None, against: list[str]) -> int | None:
        """:meth:`open_answers` of the readings ``qs`` (the gold's first) then
        :meth:`keep_by_answer`: the distinct answers when the gold is kept, else ``None``."""
        if qs is None:
            return None
        self.v.prefetch([*qs, *against])
        ok = self.open_answers(qs, against)
        return None if ok is None else self.keep_by_answer(ok)

    def open_answers(self, qs: list[str], against: list[str]) -> list[list[tuple]] | None:
        """The answers of the readings ``qs`` (the gold's first) that an agent could not rule
        out by running them: non-trivial, and not the answer of the literal reading nor of the
        query without the unclear filter (``against``). ``None`` when the gold's is ruled out:
        the gold is held to the same test as every other reading, so ruling readings out this
        way leaves the gold uniform among those left (:mod:`clarisql.envs.explorers`)."""
        bad = [a for a in (self.rows(q) for q in against) if a is not None]
        out = []
        for i, q in enumerate(qs):
            a = self.rows(q)
            fine = a is not None and not is_trivial(a) and not any(same_answer(a, b) for b in bad)
            if i == 0 and not fine:
                return None
            if fine and a is not None:
                out.append(a)
        return out

    def column_readings(
        self, table: str, column: str, surface: Any, literal: Any = None
    ) -> list[Any]:
        """The readings of ``surface`` among *every* value of ``table.column`` (read with one
        query, :func:`~clarisql.envs.explorers.reach_sql`, answered from the column's
        :class:`~clarisql.envs.synth.value_index.ValueIndex`; all values when nothing fits or
        nothing was written), ``literal`` left out."""
        allv = f"SELECT DISTINCT {qi(column)} FROM {qi(table)} WHERE {qi(column)} IS NOT NULL"
        if surface is not None and str(surface).strip():
            key = (table, column, str(surface))
            if key not in self._fits:  # (a pure function of the column and the surface)
                near = [r[0] for r in self._values.reach(qi(table), qi(column), key[2]) or []]
                self._fits[key] = fitting(key[2], near)
            fit = self._fits[key]
            if fit is not None:
                return readings(None, fit, literal)
        # a made-up name reads as the values it could be made from (explorers.readings)
        every = [r[0] for r in self.rows(f"{allv} LIMIT 5000") or []]
        return readings(surface, every, literal)

    def unrankable_values(
        self,
        table: str,
        column: str,
        surface: Any,
        cands: list[Any],
        gold: Any,
        literal: Any = None,
    ) -> list[Any]:
        """The readings of ``surface`` among every value of ``table.column``
        (:meth:`column_readings`; ``cands``, the caller's own close values, only need to hold
        the gold), ``gold`` first; empty when the surface does not fit ``gold``. The caller
        draws its gold uniformly among them."""
        reads = self.column_readings(table, column, surface, literal)
        if gold not in reads:
            return []
        return [gold, *(x for x in reads if x != gold)]

    def settled_by_all(
        self, gold_rows: list[tuple], parts: list[str], relaxed: Callable[[tuple[str, ...]], Agg]
    ) -> bool:
        """True when an agent that never asks would be right: it reads every candidate at once,
        i.e. ``relaxed(drop)`` drops the unclear filters named in ``drop`` (a family's scope
        becomes the literal reading's table), each part alone and all together, and one such
        reading gives the gold answer."""
        drops = [(p,) for p in parts] + ([tuple(parts)] if len(parts) > 1 else [])
        for drop in drops:
            rows = self.rows(relaxed(drop).sql())
            if rows is not None and same_answer(gold_rows, rows):
                return True
        return False

    # --- text -------------------------------------------------------------------------------------
    def render(self, recipe, gold, naive, base_g, gold_t, sc, sp, ent, extra, checks) -> Made:
        rng = self.rng
        intent, scope_kind, _ = RECIPES[recipe]
        uss: list[Underspec] = []
        fam = sc is not None and sc.column is None
        # the whole table (or family) stands for all its rows: named in the plural ("the films")
        subj_name = plural(singular(sc.stem if fam else human(gold_t.name)))
        f = ""
        if extra is not None:
            if extra[0].plain:
                f += rng.choice(_YEAR_PHRASE).format(v=show(extra[1]))
            else:
                f += rng.choice(_FILTER).format(col=human(extra[0].slot), v=_quote(extra[1]))
        prefix = ""
        if intent:
            uss.append(Underspec(Label("intent"), base_g.reveal()))
        if sc is not None and sp is not None:
            gold_v = (
                show(sp[0]) if not fam or sc.slot == "year" else sc.tables[sc.values.index(sp[0])]
            )
            if scope_kind == "Missing":
                tpl = rng.choice(_MISSING_TABLE if fam and sc.slot == "table" else _MISSING)
                prefix = tpl.format(slot=human(sc.slot), example=sc.tables[-1])
                uss.append(Underspec(Label("Missing", "", sc.slot), gold_v))
            else:
                surface = show(sp[2])
                if sc.plain:
                    f += rng.choice(_YEAR_PHRASE).format(v=surface)
                else:
                    shown = surface if sc.year_like else _quote(surface)
                    f += rng.choice(_FILTER).format(col=human(sc.slot), v=shown)
                uss.append(Underspec(Label(scope_kind, surface, sc.slot), gold_v))
        if ent is not None:
            f += rng.choice(_FILTER).format(col=human(ent[0].name), v=_quote(ent[2]))
            uss.append(Underspec(Label("not-exist", ent[2], ent[0].name), ent[1]))
        subj = f"the {subj_name}"
        if fam and sc.slot == "table":  # the tables' common name is no phrase: say "that table"
            subj_name, subj = "rows in that table", "that table"
        if intent:
            text = rng.choice(_VAGUE).format(subj=subj, f=f)
        elif base_g.measure is None:
            text = rng.choice(_COUNT).format(rows=subj_name, f=f)
        else:
            text = rng.choice(_EXPLICIT).format(ask=base_g.ask(), subj=subj, f=f)
        if prefix and not prefix.endswith(". ") and not text.startswith(("I'", "I ")):
            text = text[0].lower() + text[1:]
        text = prefix + text
        cols = gold.columns()
        ops = ["aggregate"] + ["filter"] * bool(gold.filters)
        if gold.measure is not None and gold.measure.needs_cast:
            ops.append("cast")
        category = recipe.split(":")[0]
        return Made(
            utterance=tidy(text),
            category=category,
            gold_sql=gold.sql(),
            naive_sql=naive.sql(),
            underspecs=uss,
            meta={
                "layer": "clarify",
                "recipe": recipe,
                "difficulty": "simple"
                if gold.measure is None and len(gold.filters) <= 1
                else "moderate",
                "qtype": "single",
                "tables": [gold.table],
                "columns": cols,
                "operations": ops,
                "scope_source": None if sc is None else ("family" if fam else "column"),
                "candidates": checks,
            },
        )


def clarify_tasks(
    lake: LakeProfile, drafts: list[Draft], v: Verifier, rng: random.Random, n: int
) -> list[Task]:
    """At most ``n`` underspecified read tasks (see the module docstring).

    About a third come from ``drafts`` (:mod:`.drafted`: a filter value written unclearly, the
    draft's SQL kept as the gold, so its difficulty and single / join / union type carry over);
    the rest are spread over :data:`RECIPES` (``select``, ``from`` Missing / Error / Unmatch,
    ``where``, ``mixed``) in proportion to :data:`WEIGHTS`. A recipe the data cannot give (no measure, no scope column or family,
    no name column, no close values) yields fewer tasks, never fake ones; its share goes to the
    others, round-robin.
    """
    gen = _ClarifyGen(lake, v, rng)
    seen: set[str] = set()
    out: list[Made] = []
    if not gen.tables or n <= 0:
        return []
    # two thirds from the recipes, then a third from the drafts (their difficulty and type):
    # the recipes need no drafts, so the pipeline may start this layer while the drafts are
    # still being verified (``drafts`` is only read here, after the recipes)
    from_drafts = n // 3
    names = [name for name in RECIPES for _ in range(WEIGHTS[name])]  # a recipe per weight unit
    shares: dict[str, int] = {}
    for name, k in zip(names, spread(n - from_drafts, len(names)), strict=True):
        shares[name] = shares.get(name, 0) + k
    for name, k in shares.items():
        out += fill(k, [lambda name=name: gen.compose(name)], seen)
    out += drafted_tasks(gen, list(drafts), rng, from_drafts, seen)
    names = list(RECIPES)
    # a recipe the data could not fill leaves its share to the others, round-robin
    top_up(out, [lambda name=name: gen.compose(name) for name in names], n, seen)
    return [m.task(lake, f"synth-clarify/{i:04d}") for i, m in enumerate(out)]


__all__ = ["RECIPES", "WEIGHTS", "clarify_tasks"]
