"""One phrasing pool for synthesized questions, shared across categories (minimal pairs).

Contract
- A *frame* is a question template with named slots. The same frames phrase the answerable
  task and its unanswerable twin: "What is the {attr} of the {subj} whose {key} is {v}?" asks
  for an existing measure (answerable lookup) or for an attribute no column holds (TrustSQL's
  column kinds), so only the attribute, which the database decides, tells them apart; the
  frame, the subject, the quoting and the punctuation do not.
- :func:`quote` writes every value the same way in every category: text in double quotes,
  numbers bare (``2010``, ``3.5``).
- :func:`pick` chooses a frame with the caller's seeded ``random.Random`` (deterministic).
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Any

#: one record, one attribute: "the {attr} of the {subj} whose {key} is {v}"
ATTR_OF_RECORD = (
    "What is the {attr} of the {subj} whose {key} is {v}?",
    "Tell me the {attr} for the {subj} with {key} {v}.",
    "Can you look up the {attr} of the {subj} with {key} {v}?",
    "I need the {attr} of the {subj} whose {key} is {v}.",
)
#: one attribute of the records that match a condition
ATTR_WHERE = (
    "List the {attr} of every {subj} whose {key} is {v}.",
    "Show me the {attr} of each {subj} with {key} {v}.",
    "Which {subjs} have {key} {v}? Give their {attr}.",
)
#: one attribute of every record
ATTR_OF_EVERY = (
    "List the {attr} of every {subj}.",
    "Show me the {attr} of each {subj}.",
    "What {attr} do the {subjs} have?",
)

#: the records that match a condition, each named by more than one attribute (``{attrs}``:
#: "invoice ID and invoice date"): a record's own key is never listed alone
ROWS_WHERE = (
    "Which {subjs} have {key} {v}? Give their {attrs}.",
    "List the {subjs} whose {key} is {v}, with their {attrs}.",
    "Show me the {subjs} with {key} {v}: their {attrs}.",
)
#: rows linked to the records that match a condition, each named by its key and a describing
#: attribute (``{attrs}``: "rental ID and rental date")
JOIN_ROWS = (
    "List the {rows} of the {subjs} whose {key} is {v}: their {attrs}.",
    "Which {rows} do the {subjs} with {key} {v} have? Give their {attrs}.",
    "For the {subjs} whose {key} is {v}, list their {rows} with their {attrs}.",
)

#: distinct values of an attribute of rows linked to the records that match a condition
#: (``{attrs}`` the attribute in the plural: "order IDs"; "different" asks for each value once)
JOIN_LIST = (
    "List the different {attrs} of the {rows} for the {subjs} whose {key} is {v}.",
    "What different {attrs} do the {rows} of the {subjs} with {key} {v} have?",
    "For the {subjs} whose {key} is {v}, list the different {attrs} of their {rows}.",
)
#: the same when the attribute is what the rows are called (a row's ``address`` of addresses)
JOIN_LIST_OWN = (
    "List the different {attrs} of the {subjs} whose {key} is {v}.",
    "What different {attrs} do the {subjs} with {key} {v} have?",
    "For the {subjs} whose {key} is {v}, list their different {attrs}.",
)


#: an aggregate of the rows that match: ``{ask}`` "the average total" / "the number of",
#: ``{subj}`` "the invoices", ``{f}`` filters (:data:`FILTER`, :data:`YEAR`); the same frames
#: for answerable aggregates and for underspecified ones (ODUTQA's FROM/WHERE kinds)
AGGREGATE = (
    "What is {ask} of {subj}{f}?",
    "Tell me {ask} of {subj}{f}.",
    "I'd like to know {ask} of {subj}{f}.",
    "Can you find {ask} of {subj}{f}?",
)
#: how many rows match: ``{rows}`` "invoices"
COUNT = (
    "How many {rows} are there{f}?",
    "Count the {rows}{f}.",
    "What is the number of {rows}{f}?",
)
#: one equality filter: ``{col}`` in words, ``{v}`` as :func:`quote` writes it
FILTER = (" with {col} {v}", " where the {col} is {v}", " for {col} {v}")
#: a year filter (the table's only time dimension)
YEAR = (" in {v}", " for the year {v}")
#: an aggregate per group: ``{d}`` the grouping column
PER_GROUP = (
    "For each {d}, what is {ask} of {subj}{f}?",
    "What is {ask} of {subj}{f} per {d}?",
    "Break down {ask} of {subj}{f} by {d}.",
)
#: the number of rows per group
COUNT_PER_GROUP = (
    "How many {rows}{f} are there for each {d}?",
    "Count the {rows}{f} per {d}.",
    "What is the number of {rows}{f} for each {d}?",
)
#: top-k: ``{k}`` rows, ``{word}`` highest/lowest, ``{m}`` the measure, ``{lab}`` the naming
#: columns, ``{tie}`` the one that breaks ties
RANKING = (
    "List the {k} {rows}{f} with the {word} {m}, {word} first (ties by {tie}): the {lab} and the {m}.",
    "Which {k} {rows}{f} have the {word} {m}? Give the {lab} and the {m}, {word} first (ties by {tie}).",
    "Rank the {rows}{f} by {m}, {word} first (ties by {tie}), and give the first {k}: the {lab} and the {m}.",
)
#: rows above a threshold ``{x}`` of a measure
ABOVE = (
    "Which {rows} have {m} above {x}? Give the {lab} and the {m}.",
    "List the {lab} and the {m} of every {row} whose {m} is above {x}.",
    "Show me the {rows} with {m} over {x}: the {lab} and the {m} of each.",
)


def quote(v: Any) -> str:
    """A value as every category's questions write it."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{v:g}"
    if isinstance(v, int):
        return str(v)
    return f'"{v}"'


def article(words: str) -> str:
    """``a film``, ``an entertainer``, ``an hour``, ``a user`` (by the first letter, with the
    common exceptions)."""
    w = words.lower()
    vowel = w[:1] in "aeiou" and not w.startswith(("uni", "use", "usu", "one", "eu"))
    return f"{'an' if vowel or w.startswith(('hour', 'honest', 'honour')) else 'a'} {words}"


#: nouns a user says the same way for one or many (``data``, ``news``, ``series``)
INVARIANT = frozenset(
    "data metadata media news series species information equipment software hardware "
    "feedback furniture luggage baggage merchandise inventory music research personnel "
    "aircraft sheep fish deer offspring".split()
)
#: collective nouns: one of them is a ``staff member`` (a table named ``staff`` holds people)
COLLECTIVE = frozenset("staff faculty crew personnel".split())
#: mass nouns a table may be named by: one row is an ``inventory item``, never "an inventory",
#: and a user counts "inventory items", never "how many inventory" (:func:`row_noun`)
MASS = frozenset(
    "inventory stock merchandise equipment furniture luggage baggage software hardware "
    "information data metadata feedback music research media news mail".split()
)
#: singular nouns ending in ``s`` that a rule-based singularizer would cut (``alias``, ``gas``)
_S_SINGULARS = frozenset(
    "alias atlas bias canvas chassis corps gas iris lens bonus campus census virus status "
    "cactus apparatus plus thesis basis analysis axis crisis diagnosis".split()
)


#: words that say nothing alone (``address details`` stays: "details" is no key)
_VAGUE = frozenset("details detail info information data record records value values".split())
#: words that end a name but are no noun (``date assigned to``)
_NOT_NOUNS = frozenset("to from of in on at by for with per and or".split())


@lru_cache(maxsize=1)
def _inflector() -> Any:
    import inflect  # (imported on first use: it takes a moment to load)

    return inflect.engine()


@lru_cache(maxsize=16384)
def _singular_word(w: str) -> str:
    lw = w.lower()
    if lw in INVARIANT or lw in _S_SINGULARS or not lw.isalpha() or len(lw) < 3:
        return w
    if w.isupper():  # an acronym: ``IDS`` is rare, ``IDs`` is the plural
        return w
    if lw.endswith(("ss", "us", "is")):
        return w
    s = _inflector().singular_noun(w)
    return s if isinstance(s, str) and s else w


@lru_cache(maxsize=16384)
def _plural_word(w: str) -> str:
    lw = w.lower()
    if lw in INVARIANT:
        return w
    if w.isupper() and w.isalpha() and len(w) > 1:
        return w + "s"  # IDs, URLs
    if _singular_word(w) != w:
        return w  # already plural
    if lw in _S_SINGULARS or not lw.isalpha():
        return _inflector().plural_noun(w) if lw.isalpha() else w + "s"
    return _inflector().plural_noun(w)


def singular(words: str) -> str:
    """The last word of a noun phrase in the singular, with the ``inflect`` library:
    ``invoice items`` -> ``invoice item``, ``addresses`` -> ``address``, ``people`` ->
    ``person``, ``criteria`` -> ``criterion``; nouns said the same for one or many stay
    (``data``, ``series``); one of a collective is a member (``staff`` -> ``staff member``)."""
    head, _, last = words.rpartition(" ")
    if not last:
        return words
    s = _singular_word(last)
    if s.lower() in COLLECTIVE:
        s += " member"
    return f"{head} {s}" if head else s


def plural(words: str) -> str:
    """The last word of a noun phrase in the plural (``inflect``): ``country`` ->
    ``countries``, ``person`` -> ``people``, ``child`` -> ``children``, ``order ID`` ->
    ``order IDs``, ``staff`` -> ``staff members``; a plural stays as it is."""
    one = singular(words)
    head, _, last = one.rpartition(" ")
    if not last:
        return words
    if last.lower() in _NOT_NOUNS:  # ``date assigned to`` -> ``dates assigned to``
        first, _, rest = words.partition(" ")
        return f"{_plural_word(first)} {rest}" if first.isalpha() else words
    p = _plural_word(last)
    return f"{head} {p}" if head else p


def row_noun(table_words: str) -> str:
    """One row of a table named ``table_words`` (in words) as a countable noun:
    :func:`singular`, and a mass noun made countable (``inventory`` -> ``inventory item``,
    ``equipment`` -> ``equipment item``), so that its plural counts (``inventory items``)."""
    one = singular(table_words)
    last = one.rpartition(" ")[2]
    return f"{one} item" if last.lower() in MASS else one


def rows_noun(table_words: str) -> str:
    """The rows of a table named ``table_words`` as a countable plural (:func:`row_noun`):
    ``films``, ``inventory items``, ``staff members``."""
    return plural(row_noun(table_words))


#: how an aggregate is said (``avg`` -> the average ...), and how when the measure's own name
#: holds that word (a column named ``total``: "the sum of the totals", not "the total of the
#: total")
AGG_SAID = {"avg": "average", "sum": "total", "max": "highest", "min": "lowest"}
_AGG_ELSE = {"avg": "mean of the", "sum": "sum of the", "max": "largest", "min": "smallest"}


def agg_words(agg: str, measure: str) -> str:
    """``the average unit price``, ``the total quantity``; ``the sum of the totals`` for a
    measure whose words hold the aggregate's word."""
    word = AGG_SAID[agg]
    if word not in measure.lower().split():
        return f"the {word} {measure}"
    if agg in ("avg", "sum"):
        return f"the {_AGG_ELSE[agg]} {plural(measure)}"
    return f"the {_AGG_ELSE[agg]} {measure}"


#: marks a key that is only the record's own noun (the ``address`` of an address): a frame
#: that says "the {subj} whose {key} is {v}" says "the {subj} {v}" instead (:func:`plain_key`)
OWN_NOUN = "\ue000"
_OWN_KEY = re.compile(
    r"\s+(?:whose|where\s+the)\s+" + OWN_NOUN + r"name\s+(?:is|are)\s+(?=[\"'])"
    r"|\s+with\s+" + OWN_NOUN + r"name\s+(?=[\"'])"
)


def plain_key(text: str) -> str:
    """``text`` with a key that is only the record's noun (:func:`key_words`) said as the record
    itself: "the address whose name is "1002 Ahmadnagar Manor"" -> "the address "1002
    Ahmadnagar Manor"" (an address has no name), "the city with name "Akron"" -> "the city
    "Akron""; where a frame cannot drop it ("have each other's name"), it stays ``name``."""
    if OWN_NOUN not in text:
        return text
    return _OWN_KEY.sub(" ", text).replace(OWN_NOUN, "")


def key_words(key: str, subj: str) -> str:
    """A record's key column in words, without the subject's own noun that a user leaves out:
    the ``customer name`` of a customer is its ``name``, the ``store email`` of a department
    store its ``email``; a key that is only the subject's noun becomes ``name`` marked with
    :data:`OWN_NOUN` (the city whose city is "Rome" -> the city "Rome", :func:`plain_key`;
    :func:`pick` and :func:`~.layers.common.tidy` apply it)."""
    kw, sw = key.split(), subj.lower().split()
    if len(sw) > 1 and sw[-1] == "member" and sw[-2] in COLLECTIVE:
        sw = sw[:-1]  # (a staff member's ``staff name``)
    if not kw or not sw:
        return key
    if [w.lower() for w in kw] == sw[-len(kw) :] or singular(key).lower() == subj.lower():
        return OWN_NOUN + "name"  # (said as the record itself where a frame allows: plain_key)
    for n in range(min(len(sw), len(kw) - 1), 0, -1):
        rest = [w.lower() for w in kw[n:]]
        if [w.lower() for w in kw[:n]] == sw[-n:] and rest != ["id"] and rest[-1] not in _VAGUE:
            return " ".join(kw[n:])
    return key


def and_list(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def attr_words(attr: str, subj: str) -> str:
    """An attribute of a record in words without the record's own noun a user leaves out
    (:func:`key_words`: the ``product price`` of a product is its ``price``, the ``customer
    email`` of a customer its ``email``); an attribute that is only the record's noun stays
    (the ``address`` of an address is no ``name``)."""
    said = key_words(attr, subj).replace(OWN_NOUN, "")
    return attr if said == "name" and "name" not in attr.lower().split() else said


def frame(frames: tuple[str, ...], rng: random.Random) -> str:
    """One of ``frames`` (seeded choice), unfilled: a minimal pair fills the same frame twice."""
    return frames[rng.randrange(len(frames))]


def pick(frames: tuple[str, ...], rng: random.Random, **slots: Any) -> str:
    """One of ``frames`` (seeded choice) with its slots filled (a key that is only the record's
    noun said as the record: :func:`plain_key`)."""
    return plain_key(frame(frames, rng).format(**slots))


#: a noun said twice over: joined by a preposition ("the total of the total", "the address
#: for the address", "the employees of the employee") or side by side ("the total total")
DOUBLED_NOUN = re.compile(
    r"\b(\w{3,})(?:e?s)? (?:(?:of|for|from|in|on|at|by|per) "
    r"(?:the |all (?:the )?|its |their |every |each |an? )?)?\1(?:e?s)?\b"
    # (the second one ends its noun phrase: "the payments for payment date 2005" is no double)
    r"(?=\s*$|\s*[?.,;:!\"']|\s+(?:with|whose|where|of|for|in|on|at|by|that|which|who|is|"
    r"are|was|were|has|have|do|does|did|and|or)\b)",
    re.I,
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def doubled_noun(text: str) -> str | None:
    """The noun said twice over in ``text`` outside quotes (:data:`DOUBLED_NOUN`), or ``None``.
    The audit counts these, and no layer emits one (:func:`~.layers.common.fill`)."""
    m = DOUBLED_NOUN.search(_QUOTED.sub(" ", text))
    return m.group(0) if m else None


#: table or query words no user says: "which invoices row", "the district values of", "list each
#: once", "without repeats", an aggregate's SQL name in brackets
SQL_SPEAK = re.compile(
    r"\b\w+s row\b|\b(?:which|each|every) \w+ row\b|\bvalues\b|\bwithout repeats\b|"
    r"\beach once\b|\((?:COUNT|SUM|AVG|MIN|MAX)\)",
    re.I,
)


def sql_speak(text: str) -> str | None:
    """The table or query words in ``text`` outside quotes (:data:`SQL_SPEAK`), or ``None``."""
    m = SQL_SPEAK.search(_QUOTED.sub(" ", text))
    return m.group(0) if m else None


#: what ends the noun phrase a count asks about ("How many inventory items are there ...")
_COUNTED = re.compile(
    r"\b(?:how many|the number of|count the|count of)\s+(?!the |their |its |this |that )"
    r"((?:[\w-]+\s+){0,3}?[\w-]+)"
    r"(?=\s+(?:are|is|were|was|have|has|had|do|does|did|with|whose|where|that|which|in|for|"
    r"per|there|by|from|of)\b|\s*[?.,:;(]|$)",
    re.I,
)
#: a word that asks for one thing: "per genre", "each film", "every customer"
_ONE_OF = re.compile(r"\b(?:per|each|every)\s+([A-Za-z]{3,})\b(?!\s+of\b)", re.I)


def bad_plural(text: str) -> str | None:
    """A noun in the wrong number outside quotes, or ``None``: a count of a mass noun ("How
    many inventory are there", :data:`MASS`) or of a singular noun ("How many film"), and a
    plural after ``per``/``each``/``every`` ("per genres")."""
    t = _QUOTED.sub(" ", text)
    for m in _COUNTED.finditer(t):
        head = m.group(1).split()[-1]
        low = head.lower()
        if low in MASS:
            return m.group(0)
        if (
            head.isalpha()
            and low not in INVARIANT
            and low not in _NOT_NOUNS
            and _singular_word(head) == head
            and _plural_word(head) != head
            and _inflector().singular_noun(_plural_word(head)) == head
        ):
            return m.group(0)  # a singular count noun: "how many film"
    for m in _ONE_OF.finditer(t):
        w = m.group(1)
        if w.lower() not in INVARIANT and _singular_word(w) != w:
            return m.group(0)
    return None


def wording_flaw(text: str) -> str | None:
    """What no emitted question may hold (every layer and the drafts check it): a noun said
    twice over (:func:`doubled_noun`), table or query words (:func:`sql_speak`), a noun in the
    wrong number (:func:`bad_plural`); ``None`` when there is none."""
    return doubled_noun(text) or sql_speak(text) or bad_plural(text)


__all__ = [
    "DOUBLED_NOUN",
    "SQL_SPEAK",
    "bad_plural",
    "sql_speak",
    "wording_flaw",
    "MASS",
    "doubled_noun",
    "row_noun",
    "rows_noun",
    "ABOVE",
    "AGGREGATE",
    "COUNT",
    "COUNT_PER_GROUP",
    "AGG_SAID",
    "FILTER",
    "PER_GROUP",
    "RANKING",
    "YEAR",
    "agg_words",
    "article",
    "ATTR_OF_EVERY",
    "ATTR_OF_RECORD",
    "ATTR_WHERE",
    "JOIN_LIST",
    "JOIN_LIST_OWN",
    "JOIN_ROWS",
    "ROWS_WHERE",
    "and_list",
    "attr_words",
    "frame",
    "key_words",
    "plain_key",
    "OWN_NOUN",
    "pick",
    "plural",
    "quote",
    "singular",
]
