"""Detect agent messages that state query results the environment never returned.

DySQL-Bench reports agents that write their own ``<result>...</result>`` blocks (the tag its
environment wraps SQL results in) instead of running the query: fabricated results. Here an
agent message to the user is *hallucinated* when it states a result that no executed statement
returned:

- every ``<result>...</result>`` block (or an unterminated ``<result>`` up to the end) and every
  Python-style row list (``[(47, 'Lucas'), ...]``, the way DySQL-Bench prints rows) in the
  message is a *stated result*;
- a stated result is fabricated when nothing was returned yet in the episode, when it claims a
  write succeeded (``SQL execution Successfully``) and no write ran, or when one of its values
  (numbers, words, quoted strings; case-insensitive, ``None`` = ``NULL``, ``4.90`` = ``4.9``)
  appears in none of the results the agent was shown.

The check is token-level so the format does not matter (the environment prints rows as
``a | b``, DySQL-Bench as tuples). A message without stated results is never hallucinated:
prose claims ("your total is 12.5") are out of scope, as in DySQL-Bench.
Pure functions; no database, no environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_RESULT_BLOCK = re.compile(r"<result>(.*?)(?:</result>|\Z)", re.S | re.I)
_ROW_LIST = re.compile(
    r"\[\s*\((?:[^()\[\]]|\([^()]*\))*\)\s*(?:,\s*\((?:[^()\[\]]|\([^()]*\))*\)\s*)*\]", re.S
)
_WRITE_CLAIM = re.compile(r"SQL execution Successfully!?", re.I)
_WRITE_RETURNED = re.compile(r"row\(s\) changed|SQL execution Successfully|^OK\.?$", re.I | re.M)
_TOKEN = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[^\W\d_][\w@.+'-]*|[\w@.+-]+", re.I)
_FILLER = frozenset({"result", "results", "row", "rows", "ok", "the", "a", "an", "is", "of"})


def _norm(tok: str) -> str:
    t = tok.strip(".,;:'\"-").lower()
    if t in ("none", "null"):
        return "null"
    if re.fullmatch(r"-?\d+\.\d+", t):
        t = t.rstrip("0").rstrip(".")
    return t


def _tokens(text: str) -> set[str]:
    out = set()
    for m in _TOKEN.finditer(text):
        t = _norm(m.group(0))
        if t and t not in _FILLER:
            out.add(t)
    return out


def stated_results(message: str) -> list[str]:
    """The result snippets a message states: ``<result>`` blocks and Python row lists."""
    text = message or ""
    blocks = [m.group(1) for m in _RESULT_BLOCK.finditer(text)]
    rest = _RESULT_BLOCK.sub(" ", text)
    return blocks + [m.group(0) for m in _ROW_LIST.finditer(rest)]


def hallucinated_results(message: str, returned: Sequence[str] | Iterable[str]) -> bool:
    """Whether ``message`` states a query result that is not among ``returned``.

    ``returned``: the texts of every statement result the agent was shown so far (successes
    and errors), in any format.
    """
    snippets = stated_results(message)
    if not snippets:
        return False
    returned = [r for r in returned if r]
    if not returned:
        return True
    corpus: set[str] = set()
    for r in returned:
        corpus |= _tokens(r)
    wrote = any(_WRITE_RETURNED.search(r) for r in returned)
    for snip in snippets:
        if _WRITE_CLAIM.search(snip):
            if not wrote:
                return True
            snip = _WRITE_CLAIM.sub(" ", snip)
        if not _tokens(snip) <= corpus:
            return True
    return False


def hallucination_rate(flags: Sequence[bool]) -> float:
    """Share of flagged messages (0.0 when there are none)."""
    return sum(bool(f) for f in flags) / len(flags) if flags else 0.0


__all__ = ["hallucinated_results", "hallucination_rate", "stated_results"]
