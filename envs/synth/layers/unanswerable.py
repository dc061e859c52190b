"""TrustSQL's five kinds of unanswerable request, for any database, each checked on the schema.

Kinds (TrustSQL's definitions; strings from :data:`clarisql.envs.tasks.UNANSWERABLE_KINDS` by index)
- ``[0]`` column-surface: asks for a (non-key) column that exists in ANOTHER table, about a table
  that cannot reach that table through any number of joins (discovered join pairs and shared
  id-like columns), or reaches it only as other people's rows (:meth:`_UnansGen.other_people`:
  the ``birth date`` of a customer where only the employees, the customers' support reps, have
  one; the twin asks it of an employee); no other table it reaches has a column of that name
  either, so the value cannot be read off the record or a join path. A suite asks one
  attribute this way at most :data:`MAX_ASKS` times.

When in doubt, not unanswerable: for the three column kinds, an attribute whose head noun
(:func:`head_noun`: ``list price`` -> ``price``) is the head noun of a column of the subject
table or of any table it reaches through joins is never asked (a ``product_price`` may be the
list price; a ``store_address`` holds the address details).
- ``[1]`` column-related: an attribute that entities of the table's kind have in the world
  (:func:`~clarisql.envs.synth.names.entity_kind`, :data:`~clarisql.envs.synth.names.WORLD_ATTRIBUTES`:
  the ``date of birth`` of a customer, the ``population`` of a city) but that no table of the
  lake has; only for tables whose kind is known (a ``thing`` gets none: neither what it lacks
  nor the language of its schema can be told). When the lake withholds columns (``lake.withheld``,
  :mod:`clarisql.envs.synth.withhold`: real attributes of its rows dropped from the suite's copy
  of the data), :data:`WITHHELD_SHARE` of these requests ask for one of them first: in the
  database's own words, so the words cannot say that few databases store it. A table is asked
  at most as many different world attributes as its twins may ask columns (at least
  :data:`MIN_RELATED`).
- ``[2]`` column-unrelated: an attribute such entities have that hardly any database records
  (:func:`unrelated_attributes`: a customer's ``star sign``; never one column-related asks)
  none of whose words appears in the lake's schema or values.
- ``[3]`` non-sql: about columns that exist, but needs what no agent with SQL and text has (a
  chart, a printer, a message to a phone, a call, a calendar entry).
- ``[4]`` out-of-domain: about the kind of thing a table holds, in the database's own words, but
  asking for advice, opinion or general knowledge that no row holds ("What makes a good
  playlist?").

Minimal pairs: the three column kinds ask in the frames of :mod:`clarisql.envs.synth.phrasing`
that answerable lookups and listings use, and each carries its answerable twin in
``metadata["twin"]``: the same frame, subject, key and value with a column the table has
(:mod:`.twins` turns it into a well-specified task). Only the attribute, which the schema
decides, tells the twins apart.

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
from collections.abc import Callable, Iterator
from typing import Any

from clarisql.envs.synth.column_roles import agg_names, column_role, credit_list
from clarisql.envs.synth.layers.common import (
    Made,
    entities,
    fill,
    human,
    id_like_name,
    measures,
    plural_phrase,
    qi,
    scopes,
    spread,
    sql_lit,
    tidy,
    top_up,
    typeable,
)
from clarisql.envs.synth.names import (
    ABBREVIATIONS,
    CUE_ATTRIBUTES,
    CUE_PERSONAL,
    PATRON_CUES,
    PERSONAL_ATTRIBUTES,
    WORKER_CUES,
    WORLD_ATTRIBUTES,
    attributes_of,
    entity_cue,
    in_words,
    language_word,
    speakable,
    split_name,
    synonyms,
)
from clarisql.envs.synth.phrasing import (
    ATTR_OF_RECORD,
    ATTR_WHERE,
    agg_words,
    article,
    attr_words,
    frame,
    key_words,
    plural,
    quote,
    row_noun,
    singular,
)
from clarisql.envs.synth.profile import present_sql
from clarisql.envs.synth.types import ColumnProfile, Draft, LakeProfile, TableProfile
from clarisql.envs.synth.verify import Verifier, echoes_question, is_trivial
from clarisql.envs.tasks import UNANSWERABLE_KINDS, Task

K_SURFACE, K_RELATED, K_UNRELATED, K_NONSQL, K_OOD = UNANSWERABLE_KINDS[:5]

#: Column-related attributes come from :data:`~clarisql.envs.synth.names.WORLD_ATTRIBUTES`:
#: what entities of the table's kind (:func:`~clarisql.envs.synth.names.entity_kind`) have in
#: the world; column-unrelated ones from the attributes of the other kinds.
RELATED = WORLD_ATTRIBUTES
#: the answerable lookup's frames (:mod:`clarisql.envs.synth.phrasing`): minimal pairs
_ATTR_Q = ATTR_OF_RECORD
_ATTR_Q_WHERE = ATTR_WHERE
#: Requests that need what no agent with SQL and text alone has: drawing an image, sending a
#: message, a phone call, a printer, a calendar (translating, summarising or writing a poem
#: are text: an LLM agent can do them, so they are not asked as non-sql).
_NONSQL_MEASURE = (  # (``{am}``: :func:`~clarisql.envs.synth.phrasing.agg_words`)
    "Draw a bar chart of {am} per {d}.",
    "Plot {am} per {d} as a pie chart.",
    "Email a table of {am} per {d} to my manager.",
    "Print {am} per {d} on the office printer.",
    "Make a slide with a chart of {am} per {d}.",
    "Post {am} per {d} to our team channel.",
)
_NONSQL_TEXT = (
    "Send a text message with the {c} of the {subj} whose {key} is {v} to my phone.",
    "Print the {c} of the {subj} with {key} {v} on the office printer.",
    "Email the {c} of the {subj} whose {key} is {v} to my manager.",
    "Put the {c} of the {subj} with {key} {v} on a sticky label and print it.",
)
#: only for a table of people (:data:`_PEOPLE`)
_NONSQL_PERSON = (
    "Phone the {subj} whose {key} is {v} and ask them to confirm their {c}.",
    "Put a reminder to call the {subj} whose {key} is {v} in my calendar for tomorrow.",
    "Book a meeting with the {subj} whose {key} is {v} for next Monday.",
)
_PEOPLE = re.compile(
    r"first_?name|last_?name|email|birth|employee|customer|person|people|staff|player|"
    r"student|member|user|patient|author|artist|actor|singer|driver|teacher|manager",
    re.I,
)
#: a name that stands for several people or a group: "A & B", "A, B", "A/B", "A feat. B", or
#: an ensemble's word (orchestra, choir, quartet, band ... in a few languages)
_GROUP_NAME = re.compile(
    r"\s(?:&|and|und|et|y|e|with|feat\.?|featuring|vs\.?)\s|,\s|\s?/\s?|\b(?:orchestr\w*|"
    r"orquesta|orkest\w*|choir|chorus|chor|coro|chœur|ensemble|quartet\w*|quintet\w*|trio|"
    r"band|philharmoni\w*|symphon\w*|sinfoni\w*|consort|singers|players|brothers|sisters|"
    r"academy|akademie|kammer\w*)\b",
    re.I,
)
#: a table of "people" whose names are groups this often is no table of people
GROUP_SHARE = 0.05
#: Out-of-domain: about the database's own entities (its tables' rows, in words), but asking
#: for advice, opinion or general knowledge that no row of any table holds.
_OOD: dict[str, tuple[str, ...]] = {
    "person": (
        "What makes a good {ent}?",
        "What do {ents} usually worry about?",
        "How should I talk to an unhappy {ent}?",
    ),
    "place": (
        "What is the best time of year to visit {a_ent}?",
        "Why do people move to a new {ent}?",
        "What makes {a_ent} a nice place to live?",
        "How do I find my way around an unfamiliar {ent}?",
    ),
    "site": (
        "What makes {a_ent} pleasant to spend time in?",
        "How do I find my way around an unfamiliar {ent}?",
        "What should I bring when I visit {a_ent}?",
    ),
    "address": (
        "How do I write {a_ent} correctly on a letter?",
        "Why do some countries write {ents} in a different order?",
    ),
    "organisation": (
        "What makes {a_ent} successful?",
        "How do I pick a good {ent}?",
        "How is {a_ent} usually run?",
        "What do people usually like about their {ent}?",
    ),
    "transaction": (
        "How do I dispute {a_ent}?",
        "Why do {ents} sometimes take so long?",
        "How were {ents} handled before computers?",
        "What is a fair way to split {a_ent} between friends?",
    ),
    "event": (
        "How do I plan {a_ent}?",
        "What should I wear to {a_ent}?",
        "How do I calm my nerves before {a_ent}?",
    ),
    "animal": (
        "How do I take care of {a_ent}?",
        "How much exercise does {a_ent} need?",
        "What should I feed {a_ent}?",
    ),
    "vehicle": (
        "How do I look after {a_ent}?",
        "Should I buy or lease {a_ent}?",
        "How do I learn to drive {a_ent}?",
    ),
    "*": (
        "What makes a good {ent}?",
        "How do I choose {a_ent}?",
        "What should I look for in {a_ent}?",
        "How were {ents} different a hundred years ago?",
        "What are common mistakes people make with {ents}?",
    ),
}
#: opinions about one of the table's own records (a creative work, a product, a place)
#: what only people who do a job are asked about (no "typical day" of a customer)
_OOD_WORKER = (
    "How do I become a better {ent}?",
    "What is a typical day like for {a_ent}?",
)

_OOD_OPINION = (
    "Would I enjoy {v}?",
    "Is {v} worth my time?",
    "What would a friend of mine think of {v}?",
)


def plausible(kind: str, cue: str | None = None) -> tuple[str, ...]:
    """Every attribute an entity of ``kind`` (told by the word ``cue``) plausibly has in the
    world: :func:`~clarisql.envs.synth.names.attributes_of` and
    :data:`~clarisql.envs.synth.names.PERSONAL_ATTRIBUTES`. The three column kinds ask only
    for these (a question a user could write about those records)."""
    if cue is not None and cue in CUE_ATTRIBUTES:  # (the kind's list may not fit the cue)
        return CUE_ATTRIBUTES[cue]
    return tuple(dict.fromkeys((*attributes_of(kind, cue), *PERSONAL_ATTRIBUTES.get(kind, ()))))


def unrelated_attributes(kind: str, cue: str | None = None) -> tuple[str, ...]:
    """What column-unrelated requests ask of an entity of ``kind``: its
    :data:`~clarisql.envs.synth.names.PERSONAL_ATTRIBUTES` (what hardly any database records;
    for a cue of their own, :data:`~clarisql.envs.synth.names.CUE_PERSONAL`: no book's soundtrack),
    never one of :func:`~clarisql.envs.synth.names.attributes_of` (what column-related
    requests ask: records are often stored with it). One attribute, one kind: the same
    "passport number" is never column-related in one task and column-unrelated in the next."""
    related = set(attributes_of(kind, cue))
    own = CUE_PERSONAL[cue] if cue in CUE_PERSONAL else PERSONAL_ATTRIBUTES.get(kind, ())
    return tuple(a for a in own if a not in related)


#: entity words too general for a question about the world (an invoice's ``item``)
_GENERIC_NOUNS = frozenset("item part good unit asset contact".split())
_WORD = re.compile(r"[a-z]+")
_YEAR_WORD = re.compile(r"year|yr|date|time|season|period", re.I)
_STOP = frozenset(
    "a an the of to in on for and or is are be do does how what which who whom whose with by my me "
    "i you your it its this that at from about into can best way tell write tonight".split()
)


def words(text: str) -> frozenset[str]:
    """Content words of a name or sentence (human-readable, lower case, stop words out)."""
    return frozenset(w for w in _WORD.findall(human(text)) if w not in _STOP and len(w) > 1)


#: words that only say "something about" the noun before them (``address details``): the
#: head noun is the word before them
_GENERIC = frozenset("detail details info information data record records value values".split())


def head_noun(text: str) -> str:
    """The head noun of an attribute or column name: its last content word, singular, generic
    trailers skipped (``list price`` -> ``price``, ``store_address`` -> ``address``,
    ``address details`` -> ``address``); ``""`` when it has no content word."""
    ws = [w for w in _WORD.findall(human(text).lower()) if w not in _STOP and len(w) > 1]
    while len(ws) > 1 and ws[-1] in _GENERIC:
        ws.pop()
    return singular(ws[-1]) if ws else ""


#: modifiers that qualify an attribute without naming another one (a ``unit price`` may be the
#: ``list price``; a ``home address`` the ``address``): they never tell two attributes apart
QUALIFIERS = frozenset(
    "unit list sale sales retail base net gross total standard regular current actual full main "
    "primary default usual normal final latest official home personal preferred contact own "
    "local general overall".split()
)


def modifiers(text: str, entity: frozenset[str] = frozenset()) -> frozenset[str]:
    """The words of an attribute or column name that tell which ``head_noun`` it is: its content
    words (singular, synonyms included) but the head noun, the words of the table it belongs to
    (``entity``: ``product`` in ``product_price``) and :data:`QUALIFIERS`
    (``date of birth`` -> ``{birth}``; ``store_address`` in ``store`` -> ``{}``)."""
    h = head_noun(text)
    ws = {singular(w) for w in _WORD.findall(human(text).lower()) if w not in _STOP and len(w) > 1}
    ws -= {h, *_GENERIC, *QUALIFIERS}
    ws -= entity | {singular(w) for w in entity}
    return frozenset(x for w in ws for x in synonyms(w))


#: parts of an address: never unanswerable where a reachable column holds addresses as text
#: (``address_details`` "145 Alice Corners Willmsport, NV 36680" spells the postal code)
ADDRESS_PARTS = frozenset(
    {"postal code", "country code", "building name", "apartment number", "floor number",
     "street name", "house number", "zip code", "postcode"}
)  # fmt: skip

#: words that make a date the first or last of several (a MAX or MIN over linked rows' dates)
_EXTREMES = frozenset("last latest first earliest recent previous".split())

#: a column that says what a person is called (:meth:`_UnansGen.named`)
_PERSON_NAME = re.compile(r"(?:first|last|full|sur|given|family)_?name|^name$", re.I)
#: head nouns that, said alone, do not say which attribute is meant ("the status of the agent")
VAGUE_HEADS = frozenset("status number name date time code type id value level kind".split())
#: what two times of a row give (an engagement's duration is its end minus its start)
SPANS = frozenset({"duration", "running time", "length of stay"})
#: head nouns that all say when: a ``release date`` may be read off a ``release_year``
TEMPORAL = frozenset("date year time day month datetime timestamp period season".split())


def distinct_attributes(attr: str, column: str, entity: frozenset[str]) -> bool:
    """Two names with one head noun that still name different attributes: both say which one
    (:func:`modifiers`), and no word of what they say is shared (``date of birth`` and
    ``create_date``; not ``list price`` and ``product_price``, not ``start date`` and
    ``start_time``)."""
    a, c = modifiers(attr, entity), modifiers(column, entity)
    return bool(a) and bool(c) and not (a & c)


def foreign_word(name: str) -> bool:
    """A column name that cannot be put in words (:func:`~clarisql.envs.synth.names.speakable`)
    because it holds a word of five letters or more that is no word of the question language
    (``gehalt``, ``lebenserwartung``, ``arbeitnehmer_id``), not only short abbreviations
    (``AgtCity``, ``hbp``). What it holds cannot be told, so an attribute asked of a table that
    reaches it is never called unanswerable."""
    if speakable(name):
        return False
    return any(
        len(p) >= 5 and p.isalpha() and p not in ABBREVIATIONS and not language_word(p)
        for p in split_name(name)
    )


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
    return next(holders(attr, tables, semantic), None) is None


def holders(
    attr: str, tables: list[TableProfile], semantic: Any = None
) -> Iterator[tuple[TableProfile, ColumnProfile]]:
    """The columns of ``tables`` that may hold ``attr`` (:func:`absent`'s checks), in order."""
    aw, an = words(attr), _norm(attr)
    ax = frozenset(x for w in aw for x in synonyms(w))
    initials = _initials(attr)
    for t in tables:
        for c in t.columns:
            if _may_hold(attr, aw, an, ax, initials, c, semantic):
                yield t, c


def _may_hold(
    attr: str,
    aw: frozenset[str],
    an: str,
    ax: frozenset[str],
    initials: set[str],
    c: ColumnProfile,
    semantic: Any,
) -> bool:
    cw = words(c.name)
    if cw and (cw <= aw or aw <= cw):
        return True
    full = _expanded(c.name)
    if full and (full & ax) and (words(in_words(c.name)) <= ax or aw <= full):
        return True
    if difflib.SequenceMatcher(None, an, _norm(c.name)).ratio() >= 0.8:
        return True
    if not speakable(c.name) and c.name.lower() in initials:
        return True
    if aw and any(aw <= words(v) for v in c.samples if isinstance(v, str) and len(v) <= 200):
        return True
    # (a name that is no English word may still be close in meaning)
    return semantic is not None and semantic(attr, in_words(c.name))


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


#: how often a suite asks one attribute as column-surface at most
MAX_ASKS = 3
#: A table is asked at most as many different world attributes (column-related) as it has
#: columns its twins may ask (:meth:`_UnansGen.twin_columns`), and at least this many: the
#: unanswerable side's words as varied as the answerable side's. Nine agents whose twins can
#: only ask their hire date, asked twenty different absent attributes, would teach "a word
#: never seen is absent" (the wording probe: mean 0.624 and 25 of 72 splits above 0.65
#: without the bound, 0.610 and 19 with it, six seeds of four databases)
MIN_RELATED = 2
#: how often a column-related request is drawn among the withheld columns first (when the lake
#: has any), and how often a suite asks one withheld column at most
WITHHELD_SHARE = 0.6
WITHHELD_ASKS = 4


class _UnansGen:
    def __init__(self, lake: LakeProfile, v: Verifier, rng: random.Random):
        self.lake, self.v, self.rng = lake, v, rng
        self.tables = [  # (link and mirror tables are no subject: lake.non_subjects)
            t for t in lake.tables if t.rows > 0 and t.usable() and lake.is_subject(t.name)
        ]
        vocab: set[str] = set()
        for t in lake.tables:
            vocab |= words(t.name)
            for c in t.columns:
                vocab |= words(c.name)
                vocab |= {w for s in c.samples if isinstance(s, str) for w in words(s)}
        self.vocab = frozenset(vocab)
        self._absent: dict[str, bool] = {}
        self._credits: dict[tuple[str, str], bool] = {}
        self._semantic: Any = None
        self._links: dict[str, set[str]] | None = None
        self._surface: dict[str, list[tuple[TableProfile, ColumnProfile]]] = {}
        self._heads: dict[str, dict[str, list[tuple[str, frozenset[str], str]]]] = {}
        self._groups: dict[str, bool] = {}
        self._schema_words: frozenset[str] | None = None
        self._asked: dict[str, int] = {}  # attribute -> how often a column kind asked it
        self._twinned: dict[tuple[str, str], int] = {}  # (table, column) -> answerable twins
        self._related: dict[str, list[str]] = {}  # table -> world attributes asked of it
        self._same: dict[str, set[str]] | None = None  # table -> one-to-one linked tables
        self._people: dict[str, frozenset[str]] = {}  # table -> other people's tables

    def credits(self, t: TableProfile, c: ColumnProfile) -> bool:
        """Whether ``c``'s values read as credit lists (:func:`~clarisql.envs.synth.column_roles.
        credit_list`, read on up to 2,000 of its values): no record is named by one."""
        key = (t.name, c.name)
        if key not in self._credits:
            vals = []
            if c.kind == "text":
                got = self.v.trusted_rows(
                    f"SELECT DISTINCT {qi(c.name)} FROM {qi(t.name)} "
                    f"WHERE {qi(c.name)} IS NOT NULL LIMIT 2000"
                )
                vals = [r[0] for r in got or [] if isinstance(r[0], str)]
            self._credits[key] = credit_list(vals)
        return self._credits[key]

    def absent_anywhere(self, attr: str) -> bool:
        """:func:`absent` over every table of the lake, the embedder included (cached)."""
        if attr not in self._absent:
            if self._semantic is None:
                self._semantic = embedder_check() or (lambda a, b: False)
                prime = getattr(self._semantic, "prime", None)
                if prime is not None:  # every column name in one batch, then one text per attr
                    pools = [a for k in RELATED for a in plausible(k)] + [attr]
                    prime(
                        [*pools, *(in_words(c.name) for t in self.lake.tables for c in t.columns)]
                    )
            self._absent[attr] = absent(attr, list(self.lake.tables), self._semantic)
        return self._absent[attr]

    # --- shared pieces -------------------------------------------------------------------------
    def subject(
        self, t: TableProfile, titled: bool = False, like: str | None = None
    ) -> tuple[ColumnProfile, Any] | None:
        """A name column of ``t`` and one of its values (the record a question is about);
        with ``titled``, only a column called a name or a title (an opinion is asked of a
        film's title, not of its composer credits); with ``like``, a column whose key words
        (:func:`_key`) are ``like`` when ``t`` has one (an owner twin names its record by the
        same key as its task)."""
        cols = entities(t) or [
            c
            for c in t.usable()
            if c.unique and c.kind in ("text", "integer") and speakable(c.name)
        ]
        if titled:
            cols = [c for c in cols if {"name", "title"} & set(split_name(c.name))]
        cols = [c for c in cols if not self.credits(t, c)]
        if not cols:
            return None
        if like is not None:
            cols = [c for c in cols if _key(c, t) == like] or cols
        c = self.rng.choice(cols)
        rows = self.v.rows(
            f"SELECT {qi(c.name)} FROM {qi(t.name)} WHERE {present_sql(c, qi(c.name))} "
            f"AND LENGTH({qi(c.name)}) <= 80 GROUP BY 1 HAVING COUNT(*) = 1 ORDER BY 1 LIMIT 100"
        )
        rows = [r for r in rows or () if typeable(r[0])]  # (no address on two lines)
        if not rows:
            return None
        return c, self.rng.choice(rows)[0]

    def nearest_sql(
        self, t: TableProfile, attr: str, subj: tuple[ColumnProfile, Any] | None, cond: str
    ) -> str:
        """The literal reading: the existing column of ``t`` whose name is nearest to ``attr``,
        for the rows the question is about (``cond``)."""
        cols = [c for c in t.usable() if subj is None or c.name != subj[0].name] or list(t.columns)
        best = max(
            cols,
            key=lambda c: (
                difflib.SequenceMatcher(None, attr, human(c.name)).ratio(),
                -t.columns.index(c),
            ),
        )
        return f"SELECT {qi(best.name)} FROM {qi(t.name)} WHERE {cond}"

    def where_subject(self, t: TableProfile) -> tuple[ColumnProfile, Any, ColumnProfile] | None:
        """A scope column of ``t``, one of its values matching 2..20 rows, and a name column
        (the listing form: "the {attr} of every {subj} whose {key} is {v}")."""
        ents, scs = entities(t), scopes(t)
        ents = [c for c in ents if not self.credits(t, c)]
        ents = [c for c in ents if c.unique] or ents  # a name that tells the rows apart first
        if not ents or not scs:
            return None
        d, lab = self.rng.choice(scs), self.rng.choice(ents)
        if d.name == lab.name:
            return None
        rows = self.v.rows(
            f"SELECT {qi(d.name)} FROM {qi(t.name)} WHERE {present_sql(d, qi(d.name))} "
            f"GROUP BY 1 HAVING COUNT(*) BETWEEN 2 AND 20 ORDER BY 1 LIMIT 50"
        )
        rows = [r for r in rows or () if typeable(r[0])]
        if not rows:
            return None
        return d, self.rng.choice(rows)[0], lab

    @staticmethod
    def twin_columns(t: TableProfile, avoid: set[str]) -> list[ColumnProfile]:
        """Columns of ``t`` an answerable twin may ask for: speakable, not a key, code or flag,
        not set by the database itself (timestamps). A low-information column too, if at least
        half its rows hold a value and not all the same one: one record's city or hire date
        is a fact a lookup asks for, whatever OrQA's rule says of grouping by it (a table of
        nine agents would otherwise have no twin and be asked about only as unanswerable)."""
        from clarisql.envs.state.digest import DEFAULT_VOLATILE_COLUMNS

        return [
            c
            for c in t.columns
            if (not c.low_information or (c.missing <= 0.5 and c.distinct >= 2))
            and c.name not in avoid
            and speakable(c.name)
            and not id_like_name(c.name)
            and c.name.lower() not in DEFAULT_VOLATILE_COLUMNS
            and column_role(c) not in ("identifier", "code", "flag", "coordinate")
            and c.kind != "blob"
        ]

    def attr_task(
        self,
        kind: str,
        t: TableProfile,
        attr: str,
        extra: dict[str, Any],
        owner: tuple[TableProfile, ColumnProfile] | None = None,
    ) -> Made | None:
        """An unanswerable request for ``attr`` of ``t``'s rows, with its answerable twin in
        ``meta["twin"]``: the same frame, subject, key and value, asking for a column ``t``
        has (:mod:`~clarisql.envs.synth.layers.twins` makes it a well-specified task). With
        ``owner`` (another people's table and its column ``attr``: :meth:`other_people`), the
        twin asks the same attribute of one of ``owner``'s rows in the same frame (the
        ``birth date`` of a customer / of an employee), and the doubt rule leaves out the
        columns of :meth:`other_people`."""
        rng = self.rng
        if self.in_doubt(t, attr, self.other_people(t) if owner is not None else frozenset()):
            return None  # when in doubt, not unanswerable
        subj = self.subject(t) if rng.random() < 0.7 else None
        where = None if subj is not None else self.where_subject(t)
        if subj is None and where is None:
            subj = self.subject(t)
            if subj is None:
                return None
        twin: dict[str, Any] | None = None
        if subj is not None:
            tpl = frame(_ATTR_Q, rng)
            slots = {"subj": _row(t), "key": _key(subj[0], t), "v": _q(subj[1])}
            cond = f"{qi(subj[0].name)} = {sql_lit(subj[1])}"
            cols = [f"{t.name}.{subj[0].name}"]
            others = self.twin_columns(t, {subj[0].name})
            if owner is not None:
                twin = self.owner_twin(tpl, owner, attr, listing=False, key=slots["key"])
            if twin is None and others:
                # the column nearest to the attribute asked: their words overlap most;
                c = max(others, key=lambda c: _nearness(attr, c, t))
                if _nearness(attr, c, t)[0] == 0:  # none shares a word: the least asked one
                    used = self._twinned.get  # (twins as varied in their words as the asks)
                    c = min(others, key=lambda x: (used((t.name, x.name), 0), t.columns.index(x)))
                self._twinned[(t.name, c.name)] = self._twinned.get((t.name, c.name), 0) + 1
                said = attr_words(human(c.name), _row(t))
                if "What is the {attr}" in tpl and plural_phrase(said) != plural_phrase(attr):
                    # ("What are the pages" / "What is the genre": the verb would tell them
                    # apart) a frame whose verb does not agree with the attribute
                    tpl = rng.choice([f for f in _ATTR_Q if "What is the {attr}" not in f])
                twin = {
                    "utterance": tidy(tpl.format(attr=said, **slots)),
                    "gold_sql": f"SELECT {qi(c.name)} FROM {qi(t.name)} WHERE {cond}",
                    "columns": [f"{t.name}.{c.name}", *cols],
                }
        else:
            d, v, lab = where  # type: ignore[misc]
            tpl = frame(_ATTR_Q_WHERE, rng)
            slots = {"subj": _row(t), "subjs": plural(_row(t)), "key": _key(d, t), "v": _q(v)}
            cond = f"{qi(d.name)} = {sql_lit(v)}"
            cols = [f"{t.name}.{d.name}"]
            twin = {  # the name column: a listed answer that names its rows
                "utterance": tidy(tpl.format(attr=attr_words(human(lab.name), _row(t)), **slots)),
                "gold_sql": f"SELECT {qi(lab.name)} FROM {qi(t.name)} WHERE {cond}",
                "columns": [f"{t.name}.{lab.name}", *cols],
            }
            if owner is not None:
                twin = self.owner_twin(tpl, owner, attr, listing=True) or twin
        text = tpl.format(attr=attr, **slots)
        naive = self.nearest_sql(t, attr, subj, cond)
        if not self.v.rows(naive):
            return None
        if twin is not None:
            rows = self.v.rows(twin["gold_sql"])
            repeated = rows is not None and len({tuple(r) for r in rows}) < len(rows)
            if is_trivial(rows) or echoes_question(rows or [], twin["utterance"]) or repeated:
                twin = None  # (repeated rows: a listed answer that cannot tell its rows apart)
            else:
                twin.setdefault("tables", [t.name])
        if twin is None:
            # no answerable twin: the request is not made. A table none of whose other columns
            # an answerable lookup may ask (a staff of names and a low-information gender)
            # would be asked about only as unanswerable, and its rows would tell the kind
            return None
        meta = {"requested": attr, **extra, "twin": twin}
        return _made(kind, text, naive, [t.name], cols, meta)

    def owner_twin(
        self,
        tpl: str,
        owner: tuple[TableProfile, ColumnProfile],
        attr: str,
        listing: bool,
        key: str | None = None,
    ) -> dict[str, Any] | None:
        """The answerable twin of a request for ``attr`` that another people's table ``b``
        holds (``owner = (b, c)``): the frame ``tpl`` about one of ``b``'s rows (``listing``:
        the rows of one of ``b``'s scope values), asking ``c`` in the same words
        (:meth:`attr_task`); ``None`` when ``b`` has no subject for it."""
        b, c = owner
        if listing:  # (a listing over the rows of a scope value, never of a unique key)
            got = self.where_subject(b)
            if got is None:
                return None
            d, v, _ = got
            slots = {"subj": _row(b), "subjs": plural(_row(b)), "key": _key(d, b), "v": _q(v)}
        else:
            subj = self.subject(b, like=key)  # (the same key in words: a last name for a last
            if subj is None or subj[0].name == c.name:  # name, so only the record differs)
                return None
            d, v = subj
            slots = {"subj": _row(b), "key": _key(d, b), "v": _q(v)}
        return {
            "utterance": tidy(tpl.format(attr=attr, **slots)),
            "gold_sql": f"SELECT {qi(c.name)} FROM {qi(b.name)} WHERE {qi(d.name)} = {sql_lit(v)}",
            "columns": [f"{b.name}.{c.name}", f"{b.name}.{d.name}"],
            "tables": [b.name],
        }

    def same_rows(self, t: TableProfile) -> set[str]:
        """``t`` and the tables whose rows are ``t``'s rows: the closure of one-to-one links
        (a discovered join pair, or a shared id-like column that names one of the two, unique
        on both sides: a ``students.student_id`` that is a ``people.person_id``) through
        tables of ``t``'s kind or of no known kind (a customer and a staff member who each have one address row are
        not one person), and tables named by a word of ``t``'s name (``customer_details``)."""
        if self._same is None:
            uniq = {(x.name, c.name) for x in self.lake.tables for c in x.columns if c.unique}
            pairs = [(j.left, j.right) for j in self.lake.joins]
            ids: dict[str, list[str]] = {}
            for x in self.lake.tables:
                for c in x.columns:
                    if id_like_name(c.name):
                        ids.setdefault(c.name.lower(), []).append(x.name)
            for name, tabs in ids.items():  # (a shared key that is one of the two's own: a
                named = {singular(w) for w in words(name)}  # person_id of people and employees;
                pairs += [  # two address_ids say nothing of each other's rows)
                    ((a, name), (b, name))
                    for a in tabs
                    for b in tabs
                    if a < b and named & {singular(w) for w in words(a) | words(b)}
                ]
            one: dict[str, set[str]] = {x.name: set() for x in self.lake.tables}
            for left, right in pairs:
                lc = self._column_named(*left)
                rc = self._column_named(*right)
                if lc and rc and lc in uniq and rc in uniq and left[0] in one and right[0] in one:
                    one[left[0]].add(right[0])
                    one[right[0]].add(left[0])
            self._same = one
        own = {singular(w) for w in words(t.name)}
        kind = self.cue_of(t)[0]
        seen, todo = {t.name}, [t.name]
        while todo:
            at = todo.pop()
            for n in sorted(self._same.get(at, ())):
                if n not in seen:
                    seen.add(n)
                    if self.cue_of(self.lake.table(n))[0] in (kind, "thing"):
                        todo.append(n)  # (only these pass the identity on)
        for x in self.lake.tables:
            if own & {singular(w) for w in words(x.name)}:
                seen.add(x.name)
        return seen

    def _column_named(self, table: str, name: str) -> tuple[str, str] | None:
        """``(table, column)`` for a column named ``name`` in any case; ``None`` if none."""
        for x in self.lake.tables:
            if x.name == table:
                for c in x.columns:
                    if c.name.lower() == name.lower():
                        return x.name, c.name
        return None

    @staticmethod
    def named(t: TableProfile) -> bool:
        """Whether a column of ``t`` is what its rows are called (a first or last name, a
        name), however few rows it has (a staff of two)."""
        return any(column_role(c) == "name" or _PERSON_NAME.search(c.name) for c in t.columns)

    def other_people(self, t: TableProfile) -> frozenset[str]:
        """Tables ``t`` reaches whose rows are other people than ``t``'s: ``t`` and they hold
        people (:meth:`cue_of`) told by different words (customers, employees), and no
        one-to-one link makes one's rows the other's (:meth:`same_rows`). A person's
        attributes are their own: the ``birth date`` of a customer's support rep, reached by
        a join, is not the customer's, so a column only such a table has may be asked of ``t``
        as column-surface. Only people (rows a name column names, not a membership's link
        rows): what a city's country or a track's album has is often theirs too (a currency, a
        release date)."""
        if t.name not in self._people:
            out: set[str] = set()
            kind, cue = self.cue_of(t)
            if kind == "person":
                reach, own = self.reachable(t), self.same_rows(t)
                for x in self.lake.tables:
                    if x.name in own or x.name not in reach:
                        continue
                    k, c = self.cue_of(x)
                    if k == "person" and c != cue and self.named(x):
                        out.add(x.name)  # (rows named by a name: people, not memberships)
            self._people[t.name] = frozenset(out)
        return self._people[t.name]

    # --- the five kinds ----------------------------------------------------------------------------
    def surface_candidates(self, t: TableProfile) -> list[tuple[TableProfile, ColumnProfile]]:
        """The (other table, column) pairs column-surface may ask ``t``'s rows about (see the
        module docstring), cached per table."""
        if t.name not in self._surface:
            linked = self.reachable(t)  # any number of joins: a join path may answer,
            people = self.other_people(t)  # unless it leads to other people
            near = [x for x in self.lake.tables if x.name in linked and x.name not in people]
            self._surface[t.name] = [
                (b, c)
                for b in self.tables
                if b.name not in linked or b.name in people
                # (another person's column need not tell rows apart: a gender of two values)
                for c in (b.columns if b.name in people else b.usable())
                if words(c.name)
                and c.kind != "blob"
                and not id_like_name(c.name)
                and speakable(c.name)
                and column_role(c) != "identifier"  # ("the june of every skip label"; a
                and (column_role(c) not in ("flag", "code") or b.name in people)  # person's
                and self.fits(t, b, human(c.name))  # email reads as a code, a gender as a
                # flag; "the staff name of the address")
                and not self.named_by(t.name, c.name)
                and absent(human(c.name), near)
                and not self.in_doubt(  # (asked below: never drawn again and again in vain)
                    t,
                    attr_words(human(c.name), _row(b)),
                    people if b.name in people else frozenset(),
                )
            ]
        return self._surface[t.name]

    def column_surface(self) -> Made | None:
        rng = self.rng
        if len(self.tables) < 2:
            return None
        t = rng.choice(self.tables)
        others = [  # (a suite that asks one birth date thirty times teaches the word)
            (b, c)
            for b, c in self.surface_candidates(t)
            if self._asked.get(attr_words(human(c.name), _row(b)), 0) < MAX_ASKS
        ]
        if not others:
            return None
        near = self.look_alike(t, others, lambda x: human(x[1].name))
        low = set(
            self.least_asked([human(c.name) for _, c in near], [human(c.name) for _, c in others])
        )
        picks = {(b.name, c.name): (b, c) for b, c in near + others if human(c.name) in low}
        b, c = rng.choice(list(picks.values()))
        attr = attr_words(human(c.name), _row(b))  # (b's "customer phone" is a "phone")
        people = self.other_people(t)
        if attr != human(c.name):
            near_t = [
                x for x in self.lake.tables if x.name in self.reachable(t) and x.name not in people
            ]
            if not absent(attr, near_t):
                return None  # (t has a phone of its own)
        owner = (b, c) if b.name in people else None
        got = self.attr_task(K_SURFACE, t, attr, {"resembles": f"{b.name}.{c.name}"}, owner)
        if got is not None:
            self._asked[attr] = self._asked.get(attr, 0) + 1
        return got

    def fits(self, t: TableProfile, b: TableProfile, attr: str) -> bool:
        """Whether ``b``'s column ``attr`` is something ``t``'s rows could have: both tables
        hold one known kind of entity (two kinds of people, two kinds of sites) and ``attr``'s
        head noun is the head of an attribute such entities have (:func:`~clarisql.envs.synth.
        names.attributes_of`). A question about another kind's attribute (the ``product price``
        of a staff member, the ``order date`` of a store) or about what only another role has
        (the ``salary`` of a customer) is none a user would ask. ``attr``'s words may also be
        part of such an attribute's (an ``email`` is an ``email address``), it is no bare
        vague head (:data:`VAGUE_HEADS`: a ``status``), and it is never one only another role
        has (the ``hire date`` of a customer: :data:`~clarisql.envs.synth.names.
        EMPLOYMENT_ATTRIBUTES`)."""
        kind, cue = self.cue_of(t)
        if kind == "thing" or self.cue_of(b)[0] != kind:
            return False
        have = attributes_of(kind, cue)
        h, ws = head_noun(attr), words(attr)
        barred = [a for a in WORLD_ATTRIBUTES.get(kind, ()) if a not in have]
        said = {s for w in ws for s in synonyms(w)}  # (a "create date" is a signup date)
        if any(head_noun(a) == h and (words(a) - {h}) & said for a in barred):
            return False
        if ws == {h} and h in VAGUE_HEADS:
            return False  # (a bare "status" says no more than "the status of the agent")
        return any(  # the same head noun, or a part that keeps what tells the attribute apart
            head_noun(a) == h or (ws <= words(a) and ws - {head_noun(a)})  # (the "email" of
            for a in have  # an "email address")
        )

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

    def reachable(self, t: TableProfile) -> set[str]:
        """Tables ``t`` reaches through any number of joins (its connected component)."""
        return self.linked(t, hops=len(self.lake.tables))

    def in_doubt(self, t: TableProfile, attr: str, besides: frozenset[str] = frozenset()) -> bool:
        """``attr``'s head noun (:func:`head_noun`) is the head noun of a column of ``t`` or of
        any table reachable from it, and the two names do not say two different things of it
        (:func:`distinct_attributes`): a join path may hold it (``list price`` of a product with
        a ``product_price``), so it is never asked as unanswerable; the ``date of birth`` of a
        customer with a ``create_date`` is still asked. So is every attribute when
        such a table has a column named in another language (:func:`foreign_word`), a span
        (:data:`SPANS`: a ``duration``) of a table with two dates or times, and a role's number
        (an ``employee number``, a ``membership number``) of a table with a key of its own. The
        columns of the tables in ``besides`` (other people's: :meth:`other_people`) do not
        count."""
        h = head_noun(attr)
        if not h:
            return True
        if t.name not in self._heads:
            reach = self.reachable(t)
            heads: dict[str, list[tuple[str, frozenset[str], str]]] = {}
            for x in self.lake.tables:
                if x.name not in reach:
                    continue
                for c in x.columns:
                    if foreign_word(c.name):  # a column in another language may hold anything
                        heads.setdefault("*", []).append((c.name, frozenset(), x.name))
                    ent = words(t.name)  # (the asked table's word says nothing: store_address)
                    heads.setdefault(head_noun(c.name), []).append((c.name, ent, x.name))
            self._heads[t.name] = heads
        heads = {  # (the columns of other people's tables left out)
            head: kept
            for head, cols in self._heads[t.name].items()
            if (kept := [(c, ent) for c, ent, x in cols if x not in besides])
        }
        if "*" in heads:
            return True
        if attr in ADDRESS_PARTS and ("address" in heads or "detail" in heads):
            return True
        refs = {  # what t's references are called: a manager_staff_id leads to the manager
            singular(w) for c in t.columns if id_like_name(c.name) for w in words(c.name)
        } - {"id", "key", "code", "no", "num", "number"}
        if modifiers(attr, words(t.name)) & refs:
            return True  # ("the manager name of the store": the manager's staff row has it)
        if head_noun(attr) in TEMPORAL and words(attr) & _EXTREMES:
            near = self.linked(t)  # the last visit is the latest of the linked rows' dates
            if any(
                head_noun(c.name) in TEMPORAL or column_role(c) == "date"
                for x in self.lake.tables
                if x.name in near and x.name != t.name
                for c in x.columns
            ):
                return True
        if head_noun(attr) in SPANS or attr in SPANS:  # (an engagement's start and end)
            spans = [
                c
                for c in t.columns
                if head_noun(c.name) in TEMPORAL or column_role(c) in ("date", "time")
            ]
            if len(spans) >= 2:
                return True
        mods = {singular(w) for w in words(attr)} - {head_noun(attr)}
        roles = {singular(w) for w in mods} | {
            w[: -len("ship")] for w in mods if w.endswith("ship")
        }
        if head_noun(attr) in {"number", "id", "code"} and roles & (WORKER_CUES | PATRON_CUES):
            if any(id_like_name(c.name) and c.unique for c in t.columns):
                return True  # (an agent's employee number, a member's membership number: the key)
        counted = re.match(r"number of (\w+)$", attr)
        if counted:  # a count of things a reachable table holds is a COUNT away
            kind, _ = entity_cue(counted.group(1))
            near = self.linked(t)
            if any(
                (kind != "thing" and self.cue_of(x)[0] == kind)
                or singular(counted.group(1)) in {singular(w) for w in words(x.name)}
                for x in self.lake.tables
                if x.name in near and x.name != t.name
            ):
                return True  # (else the head-noun rule below still applies)
        same = [h, *(sorted(TEMPORAL - {h}) if h in TEMPORAL else ())]
        return any(
            not distinct_attributes(attr, c, ent) for x in same for c, ent in heads.get(x, ())
        )

    def kind_of(self, t: TableProfile) -> str:
        return self.cue_of(t)[0]

    def cue_of(self, t: TableProfile) -> tuple[str, str | None]:
        """``(kind, cue)`` of ``t``'s rows (:func:`entity_cue`), from the table and its name
        column's values: a "person" table without first or last names whose names are groups in
        at least :data:`GROUP_SHARE` of the rows (an orchestra, "A & B": :data:`_GROUP_NAME`)
        holds ensembles too, so its kind is unknown ("thing"): no salary or preferred
        language is asked of a choir."""
        kind, cue = entity_cue(t.name, [c.name for c in t.columns])
        if kind == "person" and self.groups_named(t):
            return "thing", None
        return kind, cue

    def groups_named(self, t: TableProfile) -> bool:
        """Whether ``t`` (with no first/last name columns) names groups (:meth:`cue_of`)."""
        if t.name not in self._groups:
            self._groups[t.name] = False
            if not any(
                re.search(r"first_?name|last_?name|surname", c.name, re.I) for c in t.columns
            ):
                names = [c for c in t.columns if c.kind == "text" and column_role(c) == "name"]
                for c in names[:2]:
                    got = self.v.rows(
                        f"SELECT {qi(c.name)} FROM {qi(t.name)} WHERE {qi(c.name)} IS NOT NULL "
                        f"LIMIT {min(self.v.max_rows, 1000)}"  # (a sample: the first rows)
                    )
                    vals = [str(r[0]) for r in got or []]
                    hits = sum(bool(_GROUP_NAME.search(x)) for x in vals)
                    if vals and hits >= max(2, GROUP_SHARE * len(vals)):
                        self._groups[t.name] = True
        return self._groups[t.name]

    def column_related(self) -> Made | None:
        """An attribute such entities have in the world (:func:`plausible` for the table's
        kind) that no table of the lake holds and no join path may hold (:meth:`in_doubt`);
        most of the time one in the words of the schema (:meth:`look_alike`)."""
        if self.lake.withheld and self.rng.random() < WITHHELD_SHARE:
            got = self.withheld_related()
            if got is not None:
                return got
        t = self.rng.choice(self.tables)
        kind, cue = self.cue_of(t)
        if kind == "thing":  # rows of unknown kind: what they lack cannot be told (nor in what
            return None  # language their schema speaks), so no column-related request
        pool = [
            a
            for a in attributes_of(kind, cue)
            if self.absent_anywhere(a) and not self.in_doubt(t, a)
        ]
        if not pool:
            return None
        mine = self._related.setdefault(t.name, [])
        if len(mine) >= max(MIN_RELATED, len(self.twin_columns(t, set()))):
            pool = [a for a in pool if a in mine] or pool
        attr = self.rng.choice(self.least_asked(self.look_alike(t, pool, str), among=pool))
        got = self.attr_task(K_RELATED, t, attr, {"entity_kind": kind, "entity_cue": cue})
        if got is not None:
            self._asked[attr] = self._asked.get(attr, 0) + 1
            if attr not in mine:
                mine.append(attr)
        return got

    def withheld_related(self) -> Made | None:
        """A column the suite's copy of the data no longer has (``lake.withheld``,
        :mod:`clarisql.envs.synth.withhold`), asked of its own table's rows in the words its
        twins use for columns: the request reads like the answerable ones about the same rows,
        and only the schema decides. Each at most :data:`WITHHELD_ASKS` times, the least asked
        first."""
        names = {x.name for x in self.tables}
        left = [
            (tn, col, attr)
            for tn, col, attr in self.lake.withheld
            if attr
            and tn in names
            and self._asked.get(attr, 0) < WITHHELD_ASKS
            and self.absent_anywhere(attr)  # (the embedder's word, which withholding had not)
        ]
        if not left:
            return None
        low = set(self.least_asked([a for _, _, a in left]))
        tn, col, attr = self.rng.choice([x for x in left if x[2] in low])
        t = self.lake.table(tn)
        kind, cue = self.cue_of(t)
        extra = {"entity_kind": kind, "entity_cue": cue, "withheld": f"{tn}.{col}"}
        got = self.attr_task(K_RELATED, t, attr, extra)
        if got is not None:
            self._asked[attr] = self._asked.get(attr, 0) + 1
        return got

    def least_asked(self, pool: list[str], among: list[str] | None = None) -> list[str]:
        """The attributes of ``pool`` asked least often so far in this suite (a suite that asks
        the ``release date`` of six tracks teaches the word, not the schema); with ``among``
        (the wider pool ``pool`` was narrowed from), those of ``pool`` asked at most once more
        than the least asked of ``among``, or ``among``'s least asked when none is."""
        n = self._asked.get
        if among is not None:
            floor = min(n(a, 0) for a in among)
            near = [a for a in pool if n(a, 0) <= floor + 1]
            return self.least_asked(near) if near else self.least_asked(among)
        low = min(n(a, 0) for a in pool)
        return [a for a in pool if n(a, 0) == low]

    #: how often an unanswerable attribute is drawn among those in the schema's words
    LOOK_ALIKE_SHARE = 0.7

    def schema_words(self) -> frozenset[str]:
        """The words of the columns answerable questions ask for (:meth:`twin_columns` of every
        subject table), singular: the vocabulary of the suite's answerable twins."""
        if self._schema_words is None:
            ws: set[str] = set()
            for x in self.tables:
                for c in self.twin_columns(x, set()):
                    ws |= {singular(w) for w in words(human(c.name))}
            self._schema_words = frozenset(ws)
        return self._schema_words

    def look_alike(self, t: TableProfile, pool: list[Any], name: Any) -> list[Any]:
        """:data:`LOOK_ALIKE_SHARE` of the time, the attributes of ``pool`` that share a word
        with a column answerable questions ask for (:meth:`schema_words`: the ``date of birth``
        of a customer in a schema with ``create_date``, the ``middle name`` beside ``first_name``):
        the unanswerable request then reads like an answerable one, its words are the words of
        schemas, and only what the schema holds tells them apart; else (or when none does) all
        of them."""
        own = self.schema_words()
        near = [x for x in pool if {singular(w) for w in words(name(x))} & own]
        return near if near and self.rng.random() < self.LOOK_ALIKE_SHARE else pool

    def column_unrelated(self) -> Made | None:
        """An attribute entities of the table's kind plausibly have (:func:`plausible`: the
        ``star sign`` of a customer, the ``carbon footprint`` of a product) but that is
        unrelated to the schema: none of its words is in the lake's table or column names or
        values. A question a user could ask about those records, never another kind's
        attribute (no ``mayor`` of a product); rows of unknown kind get none."""
        t = self.rng.choice(self.tables)
        kind, cue = self.cue_of(t)
        if kind == "thing":
            return None
        pool = [
            a
            for a in unrelated_attributes(kind, cue)
            if not (words(a) & self.vocab) and self.absent_anywhere(a)
        ]
        if not pool:
            return None
        attr = self.rng.choice(self.least_asked(pool))
        got = self.attr_task(K_UNRELATED, t, attr, {"entity_kind": kind, "entity_cue": cue})
        if got is not None:
            self._asked[attr] = self._asked.get(attr, 0) + 1
        return got

    def non_sql(self) -> Made | None:
        rng = self.rng
        t = rng.choice(self.tables)
        ms, ds = measures(t), scopes(t)
        if ms and ds and rng.random() < 0.6:
            m, d = rng.choice(ms), rng.choice(ds)  # a scope column has >= 2 values (profile)
            agg = rng.choice([a for a in agg_names(m) if a != "min"])  # no total of a rate
            text = rng.choice(_NONSQL_MEASURE).format(
                am=agg_words(agg, human(m.name)), d=human(d.name)
            )
            naive = (
                f"SELECT {qi(d.name)}, {agg.upper()}({qi(m.name)}) FROM {qi(t.name)} "
                f"GROUP BY 1 ORDER BY 1"
            )
            cols = [f"{t.name}.{m.name}", f"{t.name}.{d.name}"]
        else:
            subj = self.subject(t)
            texts = [  # (a column whose name cannot be put in words is not asked about)
                c
                for c in t.usable()
                if c.kind == "text"
                and speakable(c.name)
                and (subj is None or c.name != subj[0].name)
            ]
            if subj is None or not texts:
                return None
            c = rng.choice(texts)
            # (the table's own name and name-like columns: a customer ID in engagements does
            # not make an engagement someone to phone)
            cue = t.name + " " + " ".join(x.name for x in t.columns if not id_like_name(x.name))
            pool = _NONSQL_TEXT + (_NONSQL_PERSON if _PEOPLE.search(cue) else ())
            text = rng.choice(pool).format(
                c=attr_words(human(c.name), _row(t)),
                subj=_row(t),
                key=_key(subj[0], t),
                v=_q(subj[1]),
            )
            naive = f"SELECT {qi(c.name)} FROM {qi(t.name)} WHERE {qi(subj[0].name)} = {sql_lit(subj[1])}"
            cols = [f"{t.name}.{c.name}", f"{t.name}.{subj[0].name}"]
        have = {c.name for c in t.columns}
        if not all(x.split(".", 1)[1] in have for x in cols) or not self.v.rows(naive):
            return None  # non-sql is about columns that exist, and their data is there
        return _made(K_NONSQL, text, naive, [t.name], cols, {})

    def entity_noun(self, t: TableProfile) -> str | None:
        """What one row of ``t`` is, as a common noun a question about the world may use:
        the word of the table's name that tells its kind (:func:`~clarisql.envs.synth.names.
        entity_cue`: ``product_suppliers`` -> ``supplier``, ``staff`` -> ``staff member``),
        or a one-word name of the question language when the columns told the kind
        (``highschooler``). ``None`` for rows of unknown kind and for names that are no
        word (``tblx``, ``mitarbeiter``): never the table's name as it is."""
        kind, cue = self.cue_of(t)
        if kind == "thing" or cue in _GENERIC_NOUNS:
            return None  # ("How do I choose an item?" asks about nothing in particular)
        if cue is None:
            ws = [w for w in split_name(t.name) if w.isalpha()]
            if len(ws) != 1 or not speakable(ws[0]) or len(ws[0]) < 3:
                return None
            cue = ws[0]
        return singular(cue)

    def out_of_domain(self) -> Made | None:
        """Advice, opinion or general knowledge about the kind of thing a table holds (its
        rows in words): the database's own domain, but no row of it answers."""
        rng = self.rng
        t = rng.choice(self.tables)
        ent = self.entity_noun(t)
        if ent is None:
            return None
        kind, cue = self.cue_of(t)
        frames = _OOD.get(kind, ()) + _OOD["*"] * (kind in ("product", "work"))
        if kind == "person" and cue is not None and singular(cue) in WORKER_CUES:
            frames += _OOD_WORKER
        subj = self.subject(t, titled=True) if kind in ("product", "work") else None
        meta: dict[str, Any] = {"about": ent}
        if subj is not None and isinstance(subj[1], str) and rng.random() < 0.3:
            text = rng.choice(_OOD_OPINION).format(v=_q(subj[1]))
            meta["record"] = subj[1]
        else:
            text = rng.choice(frames).format(ent=ent, ents=plural(ent), a_ent=article(ent))
        own = words(ent) | words(plural(ent)) | words(str(meta.get("record", "")))
        if (words(text) - own) & self.vocab:
            return None  # only the entity (or one record) comes from the database
        return _made(K_OOD, text, f"SELECT COUNT(*) FROM {qi(t.name)}", [], [], meta)


def _nearness(attr: str, c: ColumnProfile, t: TableProfile) -> tuple[int, float, int]:
    """How close a column's name (in words) is to ``attr``: shared words, then spelling, then
    the column's position (the earlier first)."""
    name = human(c.name)
    shared = len(words(attr) & words(name))
    return shared, difflib.SequenceMatcher(None, attr, name).ratio(), -t.columns.index(c)


def _row(t: TableProfile) -> str:
    """``invoice_items`` -> ``invoice item``, ``addresses`` -> ``address``, ``inventory`` ->
    ``inventory item`` (:func:`~clarisql.envs.synth.phrasing.row_noun`)."""
    return row_noun(human(t.name))


def _key(c: ColumnProfile, t: TableProfile) -> str:
    """The key column in words as a user names it for a record of ``t`` (the ``customer
    name`` of a customer is its ``name``: :func:`~clarisql.envs.synth.phrasing.key_words`)."""
    return key_words(human(c.name), _row(t))


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


def _at_most(make: Callable[[], Made | None], k: int) -> Callable[[], Made | None]:
    """``make`` that gives nothing once it has made ``k`` tasks."""
    left = [k]

    def call() -> Made | None:
        if left[0] <= 0:
            return None
        got = make()
        if got is not None:
            left[0] -= 1
        return got

    return call


def unanswerable_tasks(
    lake: LakeProfile, drafts: list[Draft], v: Verifier, rng: random.Random, n: int
) -> list[Task]:
    """At most ``n`` unanswerable tasks spread evenly over TrustSQL's five kinds.

    A kind the lake cannot give (column-surface needs two unlinked tables or two tables of
    people; non-sql needs a measure and a scope column, or a name and a text column; the pools'
    words must be absent from the schema) yields fewer tasks; its share goes to the other kinds, each up to twice its own
    share (so a lake that allows one kind makes fewer tasks, not a suite of that kind).
    ``drafts`` is accepted for the shared layer signature.
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
    shares = spread(n, len(makers))
    capped = []
    for make, k in zip(makers, shares, strict=True):
        got = fill(k, [make], seen)
        out += got
        # a kind tops up the others' shortfall only to twice its own share: a lake that gives
        # one kind alone (one table in words: every request non-sql) makes fewer unanswerable
        # tasks, never a suite of one kind
        capped.append(_at_most(make, 2 * k - len(got)))
    top_up(out, capped, n, seen)
    return [m.task(lake, f"synth-unanswerable/{i:04d}") for i, m in enumerate(out)]


__all__ = [
    "RELATED",
    "absent",
    "head_noun",
    "holders",
    "plausible",
    "unanswerable_tasks",
    "words",
]
