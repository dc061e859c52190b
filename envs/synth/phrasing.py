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
from typing import Any

#: one record, one attribute: "the {attr} of the {subj} whose {key} is {v}"
ATTR_OF_RECORD = (
    "What is the {attr} of the {subj} whose {key} is {v}?",
    "Tell me the {attr} for the {subj} with {key} {v}.",
    "Which {attr} does the {subj} with {key} {v} have?",
    "I need the {attr} of the {subj} whose {key} is {v}.",
)
#: one attribute of the records that match a condition
ATTR_WHERE = (
    "List the {attr} of every {subj} whose {key} is {v}.",
    "Show me the {attr} of each {subj} with {key} {v}.",
    "What {attr} do the {subjs} with {key} {v} have?",
)
#: one attribute of every record
ATTR_OF_EVERY = (
    "List the {attr} of every {subj}.",
    "Show me the {attr} of each {subj}.",
    "What {attr} do the {subjs} have?",
)

#: distinct values of an attribute of rows linked to the records that match a condition
JOIN_LIST = (
    "List the distinct {attr} of the {rows} for the {subjs} whose {key} is {v}.",
    "Which {attr} values occur among the {rows} of {subjs} with {key} {v}? List each once.",
    "For the {subjs} whose {key} is {v}, list each {attr} of their {rows} once.",
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
#: top-k: ``{k}`` rows, ``{word}`` highest/lowest, ``{m}`` the measure, ``{lab}`` the name column
RANKING = (
    "List the {k} {rows}{f} with the {word} {m}, {word} first (ties by {lab}): their {lab} and {m}.",
    "Which {k} {rows}{f} have the {word} {m}? Give their {lab} and {m}, {word} first (ties by {lab}).",
    "Rank the {rows}{f} by {m}, {word} first (ties by {lab}), and give the first {k}: their {lab} and {m}.",
)
#: rows above a threshold ``{x}`` of a measure
ABOVE = (
    "Which {rows} have {m} above {x}? Give the {lab} and the {m}.",
    "List the {lab} and the {m} of every {row} whose {m} is above {x}.",
    "Show me the {rows} with {m} over {x}: their {lab} and {m}.",
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


def singular(words: str) -> str:
    """``invoice items`` -> ``invoice item``, ``addresses`` -> ``address``, ``countries`` ->
    ``country``, ``boxes`` -> ``box`` (``ss`` kept: ``address`` stays)."""
    w = words
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def plural(words: str) -> str:
    """``country`` -> ``countries``, ``address`` -> ``addresses``, ``film`` -> ``films``."""
    if words.endswith("s") and not words.endswith("ss"):
        return words
    if words.endswith("y") and words[-2:-1] not in tuple("aeiou"):
        return words[:-1] + "ies"
    if words.endswith(("ss", "x", "ch", "sh")):
        return words + "es"
    return words + "s"


def frame(frames: tuple[str, ...], rng: random.Random) -> str:
    """One of ``frames`` (seeded choice), unfilled: a minimal pair fills the same frame twice."""
    return frames[rng.randrange(len(frames))]


def pick(frames: tuple[str, ...], rng: random.Random, **slots: Any) -> str:
    """One of ``frames`` (seeded choice) with its slots filled."""
    return frame(frames, rng).format(**slots)


__all__ = [
    "ABOVE",
    "AGGREGATE",
    "COUNT",
    "COUNT_PER_GROUP",
    "FILTER",
    "PER_GROUP",
    "RANKING",
    "YEAR",
    "article",
    "ATTR_OF_EVERY",
    "ATTR_OF_RECORD",
    "ATTR_WHERE",
    "JOIN_LIST",
    "frame",
    "pick",
    "plural",
    "quote",
    "singular",
]
