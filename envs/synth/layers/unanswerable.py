"""TrustSQL's five kinds of unanswerable request, for any database, each checked on the schema.

Kinds (TrustSQL's definitions; strings from :data:`clarisql.envs.tasks.UNANSWERABLE_KINDS` by index)
- ``[0]`` column-surface: asks for a (non-key) column that exists in ANOTHER table, about a table
  that does not have it and is more than two joins away from that table (discovered join pairs and
  shared id-like columns); no table within two joins has a column of that name either, so the
  value cannot be read off the record or a short join path.
- ``[1]`` column-related: a column that would fit the table (chosen by the table's own cues:
  people, money, names, places, dates) but that no table of the lake has.
- ``[2]`` column-unrelated: a column from an unrelated domain (``blood type`` of an invoice) whose
  words appear nowhere in the lake's schema.
- ``[3]`` non-sql: about columns that exist, but needs what SQL alone cannot do (a chart, a
  forecast with a model, a translation, an e-mail, a summary in prose).
- ``[4]`` out-of-domain: nothing to do with the database (no content word of it appears in the
  schema's names or the profiled values).

"The column is absent" means: no column of the checked tables has the same words, a superset or a
subset of them, or a name at difflib similarity >= 0.8. ``metadata["naive_sql"]`` is what a policy
that never abstains runs: the nearest existing column for the record asked about, the data behind
a chart, a count - it always runs.
"""

from __future__ import annotations

import difflib
import os
import random
import re
from typing import Any

from clarisql.envs.synth.column_roles import agg_names, column_role
from clarisql.envs.synth.layers.common import (
    AGG_WORDS,
    Made,
    entities,
    fill,
    human,
    id_like_name,
    measures,
    qi,
    scopes,
    spread,
    sql_lit,
    tidy,
    top_up,
)
from clarisql.envs.synth.names import in_words, speakable, split_name, synonyms
from clarisql.envs.synth.phrasing import (
    ATTR_OF_EVERY,
    ATTR_OF_RECORD,
    pick,
    plural,
    quote,
    singular,
)
from clarisql.envs.synth.profile import present_sql
from clarisql.envs.synth.types import ColumnProfile, Draft, LakeProfile, TableProfile
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import UNANSWERABLE_KINDS, Task

K_SURFACE, K_RELATED, K_UNRELATED, K_NONSQL, K_OOD = UNANSWERABLE_KINDS[:5]

#: Attributes that fit a table showing a cue (a regular expression over its column names).
RELATED: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        r"first_?name|last_?name|email|birth|hire|employee|customer|person|staff|player|student|"
        r"member|user|patient|author|artist",
        ("nickname", "blood pressure", "shoe size", "favourite colour", "marital status", "height"),
    ),
    (
        r"price|total|amount|cost|salary|fee|revenue|payment",
        ("discount rate", "tax rate", "profit margin", "exchange rate", "refund reason"),
    ),
    (
        r"title|name|album|track|film|product|item",
        ("customer rating", "review text", "popularity score", "awards won", "parental rating"),
    ),
    (
        r"city|country|address|state|region|postal",
        ("population", "time zone name", "elevation", "mayor", "average rent"),
    ),
    (
        r"date|time|year|day",
        ("weather conditions", "public holiday name", "approval status", "approver"),
    ),
)
#: Attributes no ordinary business table has (checked against the schema's words anyway).
GENERIC_RELATED = (
    "internal notes",
    "priority level",
    "owner's signature",
    "colour",
    "weight in kg",
)
UNRELATED = (
    "blood type",
    "horsepower",
    "melting point",
    "wingspan",
    "orbital period",
    "calorie count",
    "tire pressure",
    "batting average",
    "boiling point",
    "annual rainfall",
    "pollen count",
    "half-life",
    "engine displacement",
    "heart rate",
    "moon phase",
    "soil acidity",
)
#: the answerable lookup's frames (:mod:`clarisql.envs.synth.phrasing`): minimal pairs
_ATTR_Q = ATTR_OF_RECORD
_ATTR_Q_TABLE = ATTR_OF_EVERY
#: Requests that need what no agent with SQL and text alone has: drawing an image, sending a
#: message, a phone call, a printer, a calendar (translating, summarising or writing a poem
#: are text: an LLM agent can do them, so they are not asked as non-sql).
_NONSQL_MEASURE = (
    "Draw a bar chart of the {agg} {m} per {d}.",
    "Plot the {agg} {m} per {d} as a pie chart.",
    "Email a table of the {agg} {m} per {d} to my manager.",
    "Print the {agg} {m} per {d} on the office printer.",
)
_NONSQL_TEXT = (
    "Send a text message with the {c} of the {subj} whose {key} is {v} to my phone.",
    "Print the {c} of the {subj} with {key} {v} on the office printer.",
)
#: only for a table of people (:data:`_PEOPLE`)
_NONSQL_PERSON = (
    "Phone the {subj} whose {key} is {v} and ask them to confirm their {c}.",
    "Put a reminder to call the {subj} whose {key} is {v} in my calendar for tomorrow.",
)
_PEOPLE = re.compile(
    r"first_?name|last_?name|email|birth|employee|customer|person|people|staff|player|"
    r"student|member|user|patient|author|artist|actor|singer|driver|teacher|manager",
    re.I,
)
_OOD = (
    "How do I {task}?",
    "Can you explain how to {task}?",
    "What's the best way to {task}?",
)
_OOD_TASKS = (
    "bake sourdough bread",
    "change a flat tyre",
    "tie a bowline knot",
    "train for a marathon",
    "repot an orchid",
    "learn to juggle",
    "fold a paper crane",
    "descale a kettle",
    "brew green tea",
    "sharpen a kitchen knife",
    "keep basil alive indoors",
    "whistle loudly",
)
_OOD_FIXED = (
    "What's the weather going to be like tomorrow?",
    "Tell me a joke about penguins.",
    "Who painted the ceiling of the Sistine Chapel?",
    "Recommend a good science-fiction novel.",
    "What should I cook for dinner tonight?",
    "How far away is the Moon?",
    "Write a haiku about autumn leaves.",
    "What is the meaning of life?",
)
_WORD = re.compile(r"[a-z]+")
_YEAR_WORD = re.compile(r"year|yr|date|time|season|period", re.I)
_STOP = frozenset(
    "a an the of to in on for and or is are be do does how what which who whom whose with by my me "
    "i you your it its this that at from about into can best way tell write tonight".split()
)


def words(text: str) -> frozenset[str]:
    """Content words of a name or sentence (human-readable, lower case, stop words out)."""
    return frozenset(w for w in _WORD.findall(human(text)) if w not in _STOP and len(w) > 1)


def _norm(name: str) -> str:
    return "".join(_WORD.findall(human(name)))


def _expanded(name: str) -> frozenset[str]:
    """Content words of a name, its words in full (``alt`` -> ``altitude``) and their synonyms."""
    out: set[str] = set()
    for w in words(name) | words(in_words(name)) | {x for x in split_name(name) if len(x) > 1}:
        out |= synonyms(w)
    return frozenset(out)


def _initials(attr: str) -> set[str]:
    ws = [w for w in _WORD.findall(attr.lower()) if w not in _STOP]
    return {"".join(w[0] for w in ws), *(w[0] for w in ws), *(w[:2] for w in ws)}


def absent(attr: str, tables: list[TableProfile], semantic: Any = None) -> bool:
    """No column of ``tables`` may hold ``attr`` (when in doubt, it may: then ``False``).

    Checked against every column: the same words, a superset or a subset of them, after
    abbreviations are written out and synonyms added (``height`` ~ ``alt``); a close name
    (difflib >= 0.8); a name that cannot be put in words whose letters are the attribute's
    initials (``G`` may be ``games``); a sample value that holds the attribute's words; and,
    with ``semantic`` (``semantic(attr, column words) -> bool``, the packaged embedder), a
    name close in meaning.
    """
    aw, an = words(attr), _norm(attr)
    ax = frozenset(x for w in aw for x in synonyms(w))
    initials = _initials(attr)
    for t in tables:
        for c in t.columns:
            cw = words(c.name)
            if cw and (cw <= aw or aw <= cw):
                return False
            full = _expanded(c.name)
            if full and (full & ax) and (words(in_words(c.name)) <= ax or aw <= full):
                return False
            if difflib.SequenceMatcher(None, an, _norm(c.name)).ratio() >= 0.8:
                return False
            if not speakable(c.name) and c.name.lower() in initials:
                return False
            if aw and any(
                aw <= words(v) for v in c.samples if isinstance(v, str) and len(v) <= 200
            ):
                return False
            if semantic is not None and speakable(c.name) and semantic(attr, in_words(c.name)):
                return False
    return True


#: cosine similarity at or above which the embedder calls two names the same attribute
SEMANTIC_THRESHOLD = 0.62


def embedder_check() -> Any:
    """``semantic(a, b) -> bool`` from the packaged embedder (``CLARISQL_SYNTH_EMBEDDER``:
    ``auto``, the default, takes MiniLM when installed, else the hashing fallback, which
    compares spelling only; ``minilm``, ``hashing``; ``none`` skips the check); cached per pair."""
    from clarisql.envs.suql.embed import make_embedder

    name = os.environ.get("CLARISQL_SYNTH_EMBEDDER", "auto").strip().lower() or "auto"
    if name == "none":
        return None
    emb = make_embedder(name)
    if emb.name == "hashing":
        return None  # (spelling only: difflib above already compares spelling)
    cache: dict[tuple[str, str], bool] = {}

    def semantic(a: str, b: str) -> bool:
        key = (a, b)
        if key not in cache:
            va, vb = emb.embed([a, b])
            cache[key] = float(va @ vb) >= SEMANTIC_THRESHOLD
        return cache[key]

    # one batch for many texts (the embedder caches per text): the column names of a lake
    semantic.prime = lambda texts: emb.embed(list(dict.fromkeys(texts)))  # type: ignore[attr-defined]
    return semantic


class _UnansGen:
    def __init__(self, lake: LakeProfile, v: Verifier, rng: random.Random):
        self.lake, self.v, self.rng = lake, v, rng
        self.tables = [t for t in lake.tables if t.rows > 0 and t.usable()]
        vocab: set[str] = set()
        for t in lake.tables:
            vocab |= words(t.name)
            for c in t.columns:
                vocab |= words(c.name)
                vocab |= {w for s in c.samples if isinstance(s, str) for w in words(s)}
        self.vocab = frozenset(vocab)
        self._absent: dict[str, bool] = {}
        self._semantic: Any = None
        self._links: dict[str, set[str]] | None = None
        self._surface: dict[str, list[tuple[TableProfile, ColumnProfile]]] = {}

    def absent_anywhere(self, attr: str) -> bool:
        """:func:`absent` over every table of the lake, the embedder included (cached)."""
        if attr not in self._absent:
            if self._semantic is None:
                self._semantic = embedder_check() or (lambda a, b: False)
                prime = getattr(self._semantic, "prime", None)
                if prime is not None:  # every column name in one batch, then one text per attr
                    pools = [a for _, attrs in RELATED for a in attrs]
                    pools += [*GENERIC_RELATED, *UNRELATED, attr]
                    prime(
                        [*pools, *(in_words(c.name) for t in self.lake.tables for c in t.columns)]
                    )
            self._absent[attr] = absent(attr, list(self.lake.tables), self._semantic)
        return self._absent[attr]

    # --- shared pieces -------------------------------------------------------------------------
    def subject(self, t: TableProfile) -> tuple[ColumnProfile, Any] | None:
        """A name column of ``t`` and one of its values (the record a question is about)."""
        cols = entities(t) or [c for c in t.usable() if c.unique and c.kind in ("text", "integer")]
        if not cols:
            return None
        c = self.rng.choice(cols)
        rows = self.v.rows(
            f"SELECT {qi(c.name)} FROM {qi(t.name)} WHERE {present_sql(c, qi(c.name))} "
            f"AND LENGTH({qi(c.name)}) <= 80 GROUP BY 1 HAVING COUNT(*) = 1 ORDER BY 1 LIMIT 100"
        )
        if not rows:
            return None
        return c, self.rng.choice(rows)[0]

    def nearest_sql(
        self, t: TableProfile, attr: str, subj: tuple[ColumnProfile, Any] | None
    ) -> str:
        """The literal reading: the existing column of ``t`` whose name is nearest to ``attr``."""
        cols = [c for c in t.usable() if subj is None or c.name != subj[0].name] or list(t.columns)
        best = max(
            cols,
            key=lambda c: (
                difflib.SequenceMatcher(None, attr, human(c.name)).ratio(),
                -t.columns.index(c),
            ),
        )
        if subj is None:
            return f"SELECT {qi(best.name)} FROM {qi(t.name)} ORDER BY 1 LIMIT 20"
        return f"SELECT {qi(best.name)} FROM {qi(t.name)} WHERE {qi(subj[0].name)} = {sql_lit(subj[1])}"

    def attr_task(
        self, kind: str, t: TableProfile, attr: str, extra: dict[str, Any]
    ) -> Made | None:
        subj = self.subject(t) if self.rng.random() < 0.7 else None
        if subj is None:
            text = pick(_ATTR_Q_TABLE, self.rng, attr=attr, subjs=plural(_row(t)), subj=_row(t))
        else:
            text = pick(
                _ATTR_Q, self.rng, attr=attr, subj=_row(t), key=human(subj[0].name), v=_q(subj[1])
            )
        naive = self.nearest_sql(t, attr, subj)
        if not self.v.rows(naive):
            return None
        cols = [f"{t.name}.{subj[0].name}"] if subj else []
        return _made(kind, text, naive, [t.name], cols, {"requested": attr, **extra})

    # --- the five kinds ----------------------------------------------------------------------------
    def column_surface(self) -> Made | None:
        rng = self.rng
        if len(self.tables) < 2:
            return None
        t = rng.choice(self.tables)
        if t.name not in self._surface:  # (other table, column) pairs t may be asked about
            linked = self.linked(t)
            near = [x for x in self.lake.tables if x.name in linked]  # t and its neighbours
            self._surface[t.name] = [
                (b, c)
                for b in self.tables
                if b.name not in linked
                for c in b.usable()
                if words(c.name)
                and not id_like_name(c.name)
                and not self.named_by(t.name, c.name)
                and absent(human(c.name), near)
            ]
        others = self._surface[t.name]
        if not others:
            return None
        b, c = rng.choice(others)
        if not speakable(c.name) or column_role(c) in ("flag", "identifier", "code"):
            return None  # ("the june of every skip label": a flag column is no attribute)
        return self.attr_task(K_SURFACE, t, human(c.name), {"resembles": f"{b.name}.{c.name}"})

    @staticmethod
    def named_by(table: str, column: str) -> bool:
        """The table's name already answers for the column (``year`` of ``sales_2022``,
        ``region`` of ``sales_north_region``)."""
        if words(column) & words(table):
            return True
        return bool(_YEAR_WORD.search(column) and re.search(r"(?:19|20)\d\d", table))

    def linked(self, t: TableProfile, hops: int = 2) -> set[str]:
        """Tables at most ``hops`` joins away from ``t`` (discovered join pairs or a shared
        id-like column; a shared ``name`` or ``last_update`` is no link)."""
        if self._links is None:
            self._links = {x.name: set() for x in self.lake.tables}
            for j in self.lake.joins:
                if j.left[0] in self._links and j.right[0] in self._links:
                    self._links[j.left[0]].add(j.right[0])
                    self._links[j.right[0]].add(j.left[0])
            keys = {
                x.name: {c.name.lower() for c in x.columns if id_like_name(c.name)}
                for x in self.lake.tables
            }
            for x in self.lake.tables:
                for y in self.lake.tables:
                    if x.name != y.name and keys[x.name] & keys[y.name]:
                        self._links[x.name].add(y.name)
        seen, frontier = {t.name}, {t.name}
        for _ in range(hops):
            frontier = {n for f in sorted(frontier) for n in self._links[f]} - seen
            seen |= frontier
        return seen

    def column_related(self) -> Made | None:
        t = self.rng.choice(self.tables)
        names = " ".join(c.name.lower() for c in t.columns) + " " + t.name.lower()
        pool = [a for cue, attrs in RELATED if re.search(cue, names) for a in attrs]
        pool = [a for a in (pool or list(GENERIC_RELATED)) if self.absent_anywhere(a)]
        if not pool:
            return None
        return self.attr_task(K_RELATED, t, self.rng.choice(pool), {})

    def column_unrelated(self) -> Made | None:
        t = self.rng.choice(self.tables)
        pool = [a for a in UNRELATED if not (words(a) & self.vocab) and self.absent_anywhere(a)]
        if not pool:
            return None
        return self.attr_task(K_UNRELATED, t, self.rng.choice(pool), {})

    def non_sql(self) -> Made | None:
        rng = self.rng
        t = rng.choice(self.tables)
        ms, ds = measures(t), scopes(t)
        if ms and ds and rng.random() < 0.6:
            m, d = rng.choice(ms), rng.choice(ds)  # a scope column has >= 2 values (profile)
            agg = rng.choice([a for a in agg_names(m) if a != "min"])  # no total of a rate
            text = rng.choice(_NONSQL_MEASURE).format(
                agg=AGG_WORDS[agg], m=human(m.name), d=human(d.name)
            )
            naive = (
                f"SELECT {qi(d.name)}, {agg.upper()}({qi(m.name)}) FROM {qi(t.name)} "
                f"GROUP BY 1 ORDER BY 1"
            )
            cols = [f"{t.name}.{m.name}", f"{t.name}.{d.name}"]
        else:
            subj = self.subject(t)
            texts = [
                c
                for c in t.usable()
                if c.kind == "text" and (subj is None or c.name != subj[0].name)
            ]
            if subj is None or not texts:
                return None
            c = rng.choice(texts)
            # (the table's own name and name-like columns: a customer ID in engagements does
            # not make an engagement someone to phone)
            cue = t.name + " " + " ".join(x.name for x in t.columns if not id_like_name(x.name))
            pool = _NONSQL_TEXT + (_NONSQL_PERSON if _PEOPLE.search(cue) else ())
            text = rng.choice(pool).format(
                c=human(c.name), subj=_row(t), key=human(subj[0].name), v=_q(subj[1])
            )
            naive = f"SELECT {qi(c.name)} FROM {qi(t.name)} WHERE {qi(subj[0].name)} = {sql_lit(subj[1])}"
            cols = [f"{t.name}.{c.name}", f"{t.name}.{subj[0].name}"]
        have = {c.name for c in t.columns}
        if not all(x.split(".", 1)[1] in have for x in cols) or not self.v.rows(naive):
            return None  # non-sql is about columns that exist, and their data is there
        return _made(K_NONSQL, text, naive, [t.name], cols, {})

    def out_of_domain(self) -> Made | None:
        rng = self.rng
        if rng.random() < 0.6:
            text = rng.choice(_OOD).format(task=rng.choice(_OOD_TASKS))
        else:
            text = rng.choice(_OOD_FIXED)
        if words(text) & self.vocab:
            return None
        t = rng.choice(self.tables)
        return _made(K_OOD, text, f"SELECT COUNT(*) FROM {qi(t.name)}", [], [], {})


def _row(t: TableProfile) -> str:
    """``invoice_items`` -> ``invoice item``, ``addresses`` -> ``address``."""
    return singular(human(t.name))


def _q(v: Any) -> str:
    return quote(v)


def _made(
    kind: str, text: str, naive: str, tables: list[str], cols: list[str], extra: dict
) -> Made:
    return Made(
        utterance=tidy(text),
        category=f"unanswerable:{kind}",
        naive_sql=naive,
        unanswerable_kind=kind,
        meta={
            "layer": "unanswerable",
            "difficulty": "simple",
            "qtype": "single",
            "tables": tables,
            "columns": cols,
            "operations": [],
            **extra,
        },
    )


def unanswerable_tasks(
    lake: LakeProfile, drafts: list[Draft], v: Verifier, rng: random.Random, n: int
) -> list[Task]:
    """At most ``n`` unanswerable tasks spread evenly over TrustSQL's five kinds.

    A kind the lake cannot give (column-surface needs two unlinked tables; non-sql needs a
    measure and a scope column, or a name and a text column; the pools' words must be absent from
    the schema) yields fewer tasks; its share goes to the other kinds. ``drafts`` is accepted for
    the shared layer signature.
    """
    gen = _UnansGen(lake, v, rng)
    if not gen.tables or n <= 0:
        return []
    makers = [
        gen.column_surface,
        gen.column_related,
        gen.column_unrelated,
        gen.non_sql,
        gen.out_of_domain,
    ]
    seen: set[str] = set()
    out: list[Made] = []
    for make, k in zip(makers, spread(n, len(makers)), strict=True):
        out += fill(k, [make], seen)
    top_up(out, makers, n, seen)
    return [m.task(lake, f"synth-unanswerable/{i:04d}") for i, m in enumerate(out)]


__all__ = ["GENERIC_RELATED", "RELATED", "UNRELATED", "absent", "unanswerable_tasks", "words"]
