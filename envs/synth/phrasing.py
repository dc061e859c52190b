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


def quote(v: Any) -> str:
    """A value as every category's questions write it."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{v:g}"
    if isinstance(v, int):
        return str(v)
    return f'"{v}"'


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
