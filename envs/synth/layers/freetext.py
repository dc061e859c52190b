"""SUQL tasks over a lake's free-text columns: ``ANSWER`` / ``SUMMARY`` inside the gold SQL.

Contract
- :func:`freetext_tasks` ``(lake, v, rng, n_answer, n_clarify)`` returns a :class:`FreeText`:
  at most ``n_answer`` answerable tasks (category ``well-specified``) and at most ``n_clarify``
  underspecified ones (category ``where``) over the columns the profile flags as free text
  (:attr:`~clarisql.envs.synth.types.ColumnProfile.free_text`) in tables that also have a naming
  column (an entity column, else a unique key); fewer when the data does not allow more, and
  ``notes`` (kind -> why, for SUITE.md) say why, e.g. when the source has no free-text column.
- Criteria come from the data, not from a domain list: *phrases* are two adjacent content words
  that at least two texts contain ("late delivery", "mad scientist"). Answerable tasks follow
  SUQL's HybridQA types: ANSWER filter (type 2), structural filter + ANSWER filter (type 4),
  COUNT over an ANSWER filter (type 5), ANSWER in the SELECT list (type 1), and SUMMARY of one
  row's text. Underspecified: a phrase's head word shared by two or more phrases ("late
  delivery", "damaged delivery"): the user asks for "a particular kind of "delivery""
  (``Label("Missing", "", column)``: one phrase is meant, the words do not say which) and
  clarifies with the phrase meant.
- Gold answers: each gold query runs through the :class:`~clarisql.envs.synth.verify.Verifier`,
  i.e. with the process's configured SUQL backend (:mod:`clarisql.envs.suql`; the offline,
  deterministic one by default), and its rows are frozen into ``gold_answer``, so scoring is
  exact and needs no model (``metadata["suql_backend"]`` names the backend: evaluate the suite
  with the same one, or the agent's own ANSWER calls may disagree with the frozen gold).
- Every task is checked: the gold answer is non-trivial, the naive reading in
  ``metadata["naive_sql"]`` (``LIKE '%keyword%'`` instead of ANSWER, the raw text instead of
  ANSWER/SUMMARY, the vague word itself) runs and gives a different answer, and on
  underspecified tasks at least two readings give different answers.
- Deterministic: texts are read in rowid order (at most :data:`MAX_TEXTS` per column), phrases
  ranked by (document frequency, phrase), and every choice is drawn from ``rng``.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.suql import as_texts, get_config
from clarisql.envs.suql.lexicon import sentences
from clarisql.envs.synth.layers.common import (
    Made,
    distinct_answers,
    entities,
    human,
    qi,
    scope_values,
    scopes,
    sql_lit,
    tidy,
)
from clarisql.envs.synth.phrasing import frame, pick, plural, quote, row_noun
from clarisql.envs.synth.types import ColumnProfile, LakeProfile, TableProfile
from clarisql.envs.synth.verify import Verifier, echoes_question, is_trivial, same_answer
from clarisql.envs.tasks import Label, Task, Underspec

MAX_TEXTS = 5000
MAX_PHRASES = 80
#: phrasings (seeded choice; a phrase is quoted like every value, :func:`~.phrasing.quote`):
#: ``{rows}`` the table's rows ("films"), ``{row}`` one ("film"), ``{col}`` the text column,
#: ``{ent}`` the naming column, ``{scope}`` an optional filter, ``{p}`` what the text mentions
_COUNT = (
    "How many {rows}{scope} have a {col} that mentions {p}?",
    "Count the {rows}{scope} whose {col} mentions {p}.",
    "What is the number of {rows}{scope} with {p} in their {col}?",
)
_LIST = (
    "Which {rows}{scope} have a {col} that mentions {p}? Give their {ent}.",
    "List the {ent} of every {row}{scope} whose {col} mentions {p}.",
    "Show me the {ent} of the {rows}{scope} with {p} in their {col}.",
)
_ASK = (
    "What does the {col} of the {row} with {ent} {v} say about {p}?",
    "According to its {col}, what about {p} for the {row} whose {ent} is {v}?",
)
_SUMMARY = (
    "Summarize the {col} of the {row} whose {ent} is {v}.",
    "Give me a short summary of the {col} of the {row} with {ent} {v}.",
)
#: how a user says that one kind of the head word is meant, not which
_VAGUE = ("a particular kind of {h}", "one specific kind of {h}", "a certain kind of {h}")
_STOP = frozenset(
    "the a an of and for in on at to by with from is are was were be been it its this that "
    "these those there their they them we our you your he she his her not but or as so very "
    "too also just have has had do does did will would can could who what when which how all "
    "any some one two more most much many out up down into over than then only about after "
    "before again here why where while each other such own same few both again ever never".split()
)


@dataclass
class FreeText:
    """The layer's output: answerable and underspecified tasks, and notes on what is missing."""

    answer: list[Task] = field(default_factory=list)
    clarify: list[Task] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class _Col:
    table: TableProfile
    col: ColumnProfile
    name: ColumnProfile
    phrases: list[tuple[str, int]]


def _texts(db: Path, table: str, column: str) -> list[str]:
    conn = apsw.Connection(
        f"file:{db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    try:
        q = f"SELECT {qi(column)} FROM {qi(table)} ORDER BY rowid LIMIT {MAX_TEXTS}"
        return [" ".join(as_texts(r[0])) for r in conn.execute(q) if r[0] is not None]
    finally:
        conn.close()


def _ok(word: str) -> bool:
    return len(word) >= 3 and word not in _STOP


def phrases(texts: list[str]) -> list[tuple[str, int]]:
    """Two adjacent content words that 2..half of the texts contain, with their document
    frequency, most frequent first (ties by phrase)."""
    df: Counter[str] = Counter()
    for text in texts:
        seen = set()
        for sent in sentences(text):
            toks = re.findall(r"[a-z]+", sent.lower())
            seen.update(f"{a} {b}" for a, b in zip(toks, toks[1:]) if _ok(a) and _ok(b))
        df.update(seen)
    top = max(2, len(texts) // 2)
    ranked = sorted(((p, c) for p, c in df.items() if 2 <= c <= top), key=lambda x: (-x[1], x[0]))
    return ranked[:MAX_PHRASES]


def _columns(lake: LakeProfile) -> list[_Col]:
    out = []
    for t in lake.tables:
        if not lake.is_subject(t.name):
            continue  # (a link or mirror table: lake.non_subjects)
        names = entities(t) or [c for c in t.columns if c.unique and not c.free_text]
        for c in t.columns:
            if c.free_text and names:
                name = next((n for n in names if n.name != c.name), None)
                if name is not None:
                    out.append(_Col(t, c, name, phrases(_texts(lake.db_path, t.name, c.name))))
    return out


def _filter(fc: _Col, phrase: str) -> str:
    return f"ANSWER({qi(fc.col.name)}, {sql_lit(f'does it mention {phrase}?')}) = 'Yes'"


def _like(fc: _Col, word: str) -> str:
    return f"{qi(fc.col.name)} LIKE {sql_lit(f'%{word}%')}"


class _Maker:
    """Builds and checks one kind of task per call (``None`` when this draw does not work)."""

    def __init__(self, lake: LakeProfile, v: Verifier, rng: random.Random, cols: list[_Col]):
        self.lake, self.v, self.rng, self.cols = lake, v, rng, cols
        self.backend = get_config().cached.key
        self.too_slow: list[str] = []

    def _gold(self, fc: _Col, sql: str) -> list[tuple] | None:
        """The gold query's rows; a column whose ANSWER pass does not fit the gold queries'
        budget is dropped (and named in the notes) instead of being tried again and again."""
        rows = self.v.rows(sql)
        if rows is None and self.v.over_budget and fc in self.cols:
            self.cols.remove(fc)
            self.too_slow.append(f"{fc.table.name}.{fc.col.name}")
        return rows

    def _col(self) -> _Col | None:
        return self.rng.choice(self.cols) if self.cols else None

    def _made(self, fc: _Col, text: str, gold: str, naive: str, kind: str, **meta: Any) -> Any:
        rows = self.v.rows(gold)
        if rows is None or is_trivial(rows) or echoes_question(rows, text):
            return None
        alt = self.v.rows(naive)
        if alt is None or same_answer(rows, alt):
            return None
        m = Made(
            utterance=tidy(text),
            category=meta.pop("category", "well-specified"),
            gold_sql=gold,
            naive_sql=naive,
            underspecs=meta.pop("underspecs", []),
            meta={
                "layer": "freetext",
                "suql_type": kind,
                "suql_backend": self.backend,
                "difficulty": "moderate",
                "qtype": "single",
                "tables": [fc.table.name],
                "columns": [f"{fc.table.name}.{c}" for c in (fc.name.name, fc.col.name)],
                **meta,
            },
        )
        return m, rows

    def _pick(self) -> tuple[_Col, str] | None:
        fc = self._col()
        if fc is None or not fc.phrases:
            return None
        return fc, self.rng.choice(fc.phrases[:40])[0]

    def _words(self, fc: _Col) -> dict[str, str]:
        row = row_noun(human(fc.table.name))
        return {
            "row": row,
            "rows": plural(row),
            "ent": human(fc.name.name),
            "col": human(fc.col.name),
        }

    def _naive_where(self, fc: _Col, phrase: str, gold_rows: Any, sql: str) -> str | None:
        """The keyword reading: LIKE on the phrase's head, else its first word, whichever
        gives a different answer than ``gold_rows`` (``sql`` has a ``{where}`` slot)."""
        for word in reversed(phrase.split()):
            naive = sql.format(where=_like(fc, word))
            alt = self.v.rows(naive)
            if alt is not None and not same_answer(gold_rows, alt):
                return naive
        return None

    def listing(self, scoped: bool = False, count: bool = False) -> Any:
        got = self._pick()
        if got is None:
            return None
        fc, phrase = got
        w = self._words(fc)
        t = qi(fc.table.name)
        sel = "COUNT(*)" if count else qi(fc.name.name)
        extra, scope_text = "", ""
        if scoped:
            sc = [c for c in scopes(fc.table) if c.name not in (fc.col.name, fc.name.name)]
            if not sc:
                return None
            col = self.rng.choice(sc)
            vals = scope_values(self.v, fc.table.name, col)
            if not vals:
                return None
            val = self.rng.choice(vals)[0]
            extra = f"{qi(col.name)} = {sql_lit(val)} AND "
            scope_text = f" with {human(col.name)} {quote(val)}"
        sql = f"SELECT {sel} FROM {t} WHERE {extra}{{where}}"
        gold = sql.format(where=_filter(fc, phrase))
        rows = self._gold(fc, gold)
        if rows is None or is_trivial(rows):
            return None
        naive = self._naive_where(fc, phrase, rows, sql)
        if naive is None:
            return None
        text = pick(_COUNT if count else _LIST, self.rng, scope=scope_text, p=quote(phrase), **w)
        kind = 5 if count else (4 if scoped else 2)
        ops = ["answer", "filter"] + ["count"] * count
        return self._made(fc, text, gold, naive, kind, operations=ops, question=phrase)

    def _one_row(self, fc: _Col, phrase: str | None = None) -> Any:
        """A naming value of exactly one row (whose text contains ``phrase``, if given)."""
        cond = f" WHERE {_like(fc, phrase)}" if phrase else ""
        vals = self.v.rows(
            f"SELECT {qi(fc.name.name)} FROM {qi(fc.table.name)}{cond} GROUP BY 1 "
            f"HAVING COUNT(*) = 1 ORDER BY 1 LIMIT 150"
        )
        return self.rng.choice(vals)[0] if vals else None

    def value(self) -> Any:
        got = self._pick()
        if got is None:
            return None
        fc, phrase = got
        val = self._one_row(fc, phrase)
        if val is None:
            return None
        w = self._words(fc)
        where = f"FROM {qi(fc.table.name)} WHERE {qi(fc.name.name)} = {sql_lit(val)}"
        q = f"what does it say about {phrase}?"
        gold = f"SELECT ANSWER({qi(fc.col.name)}, {sql_lit(q)}) {where}"
        rows = self._gold(fc, gold)
        if rows is None or rows == [("unknown",)]:
            return None
        text = pick(_ASK, self.rng, v=quote(val), p=quote(phrase), **w)
        naive = f"SELECT {qi(fc.col.name)} {where}"
        return self._made(fc, text, gold, naive, 1, operations=["answer"], question=q)

    def summary(self) -> Any:
        fc = self._col()
        val = None if fc is None else self._one_row(fc)
        if val is None:
            return None
        w = self._words(fc)
        where = f"FROM {qi(fc.table.name)} WHERE {qi(fc.name.name)} = {sql_lit(val)}"
        gold = f"SELECT SUMMARY({qi(fc.col.name)}) {where}"
        text = pick(_SUMMARY, self.rng, v=quote(val), **w)
        naive = f"SELECT {qi(fc.col.name)} {where}"
        return self._made(fc, text, gold, naive, "summary", operations=["summary"], question="")

    def vague(self) -> Any:
        fc = self._col()
        if fc is None:
            return None
        heads: dict[str, list[str]] = defaultdict(list)
        for p, _ in fc.phrases:
            heads[p.split()[1]].append(p)
        choices = sorted(h for h, ps in heads.items() if len(ps) >= 2)
        if not choices:
            return None
        head = self.rng.choice(choices)
        readings = heads[head]
        sql = f"SELECT {qi(fc.name.name)} FROM {qi(fc.table.name)} WHERE {{where}}"
        answers = {p: self._gold(fc, sql.format(where=_filter(fc, p))) for p in readings}
        if distinct_answers(answers.values()) < 2:
            return None
        meant = self.rng.choice(sorted(p for p, a in answers.items() if a and not is_trivial(a)))
        vague = self.rng.choice(_VAGUE).format(h=quote(head))
        w = self._words(fc)
        tpl = frame(_LIST, self.rng)
        text = tpl.format(scope="", p=vague, **w)
        # the minimal pair (layers.twins): the same frame with the phrase meant
        twin = {"utterance": tidy(tpl.format(scope="", p=quote(meant), **w)), "same_gold": True}
        return self._made(
            fc,
            text,
            sql.format(where=_filter(fc, meant)),
            sql.format(where=_like(fc, head)),
            2,
            category="where",
            # the words say one kind is meant but not which: ODUTQA's Missing (the data does not
            # decide it, so it is no value kind: not-exist is a value written that is not there)
            underspecs=[Underspec(Label("Missing", "", fc.col.name), meant)],
            operations=["answer", "filter"],
            question=f"does it mention {meant}?",
            candidates=sorted(readings),
            twin=twin,
        )


def _fill(makers: list[Any], n: int, seen: set[str], lake: LakeProfile, tag: str) -> list[Task]:
    out: list[Task] = []
    fails = 0
    while len(out) < n and fails < 25 * len(makers):
        got = makers[(len(out) + fails) % len(makers)]()
        if got is None or got[0].utterance in seen:
            fails += 1
            continue
        made, rows = got
        seen.add(made.utterance)
        task = made.task(lake, f"synth-freetext-{tag}/{len(out):04d}")
        task.gold_answer = [list(r) for r in rows]  # frozen: scoring needs no model
        out.append(task)
    return out


def freetext_tasks(
    lake: LakeProfile, v: Verifier, rng: random.Random, n_answer: int, n_clarify: int
) -> FreeText:
    """Free-text (SUQL) tasks over the lake (see the module docstring)."""
    res = FreeText()
    if not any(c.free_text for t in lake.tables for c in t.columns):
        res.notes["free-text (SUQL)"] = (
            "the source has no free-text column (long, mostly-unique texts of several words), "
            "so no ANSWER/SUMMARY tasks"
        )
        return res
    cols = [c for c in _columns(lake) if c.phrases]
    if not cols:
        res.notes["free-text (SUQL)"] = (
            "no free-text column has a naming column beside it and phrases shared by texts"
        )
        return res
    mk = _Maker(lake, v, rng, cols)
    seen: set[str] = set()
    makers = [mk.listing, lambda: mk.listing(scoped=True), lambda: mk.listing(count=True)]
    makers += [mk.value, mk.summary]
    res.answer = _fill(makers, n_answer, seen, lake, "a")
    res.clarify = _fill([mk.vague], n_clarify, seen, lake, "c")
    if len(res.answer) < n_answer:
        res.notes["free-text answerable"] = (
            f"{len(res.answer)} of {n_answer}: few phrases whose ANSWER filter differs from the "
            "keyword reading"
        )
    if mk.too_slow:
        res.notes["free-text columns left out"] = (
            f"{', '.join(mk.too_slow)}: ANSWER over every row does not fit the gold queries' "
            "statement budget"
        )
    if len(res.clarify) < n_clarify:
        res.notes["free-text underspecified"] = (
            f"{len(res.clarify)} of {n_clarify}: few phrases share a head word with different "
            "answers"
        )
    return res


__all__ = ["FreeText", "freetext_tasks", "phrases"]
