"""Aspects taken from the database: its column names in words, asked about in a question.

The built-in catalog (:mod:`.aspects`) knows ODUTQA-MDC's slots; any other schema's slots are its
columns (a synthesized or imported suite labels a ``Missing`` scope with the column it filters,
e.g. ``["", "BillingState", "Missing"]``). :func:`phrase` turns an identifier into words
(``BillingState`` and ``billing_state`` are both ``billing state``); :func:`asked_phrases` finds
the schema phrases a question *asks about*: the phrase occurs (plural ``s`` allowed) near an
asking word ("which", "what", "specify", "particular", "mean", ...; in Chinese 哪/什么) and is
not the subject of a preposition ("about the invoices"), so a column word that merely occurs in a
statement ("the total price of the sales") is not an aspect and good questions are not refused
because ordinary words match column names.

Everything here reads the public schema summary and the question only: the aspects a question
gets are the same whatever the task's gold labels.
"""

from __future__ import annotations

import re
from functools import lru_cache

from clarisql.envs.simulators.gate.text import normalize, tokens

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CJK = re.compile(r"[\u3400-\u9fff]")
_LINE = re.compile(r"^(?:VIEW )?([^\s(][^(\n]*?)\((.*)\)[ \t]*$", re.M)
#: words that make a nearby phrase the object of a question
ASKING = frozenset(
    "which what what's whats which's whose specify particular specific tell mean meant name "
    "confirm clarify exact exactly mind".split()
)
#: key-like columns (ids, codes) and type words are not aspects anyone asks about
_SKIP_LAST = frozenset({"id", "ids", "key", "pk", "fk", "uuid", "rowid"})
WINDOW = 4
#: "about the invoices", "of the tracks": the subject of a question, not what it asks
_SUBJECT = frozenset("about of on in for from with by to regarding concerning".split())
_ARTICLES = frozenset("the a an this that these those its their your".split())


def phrase(identifier: str) -> str:
    """An identifier in words: camelCase and snake_case split, lower case."""
    return " ".join(tokens(_CAMEL.sub(" ", identifier.replace("_", " "))))


@lru_cache(maxsize=64)
def schema_phrases(schema: str) -> tuple[str, ...]:
    """Column (and table) names of a schema summary in words, longest first; ids left out."""
    out = set()
    for ident in identifiers(schema):
        p = phrase(ident)
        words = p.split()
        if not words or words[-1] in _SKIP_LAST or len(p) < 3:
            continue
        out.add(p)
    return tuple(sorted(out, key=lambda p: (-len(p.split()), p)))


def identifiers(schema: str) -> set[str]:
    """Table and column names of a ``table(col TYPE, ...)`` summary, as written (case kept)."""
    out: set[str] = set()
    for m in _LINE.finditer(schema or ""):
        out.add(m.group(1).strip())
        for col in re.split(r",\s+(?![^()]*\))", m.group(2)):
            col = col.strip()
            name = col.split(" ", 1)[0] if " " in col else col
            if name.startswith('"') and '"' in name[1:]:
                name = col[1 : col.index('"', 1)]
            if name:
                out.add(name)
    return out


def _occurrences(toks: list[str], words: list[str]) -> list[int]:
    n = len(words)
    hits = []
    for i in range(len(toks) - n + 1):
        ok = all(
            t == w or t == w + "s" or t == w + "es" or (w.endswith("y") and t == w[:-1] + "ies")
            for t, w in zip(toks[i : i + n], words)
        )
        if ok:
            hits.append(i)
    return hits


def asked_phrases(question: str, phrases: tuple[str, ...]) -> set[str]:
    """The phrases (from :func:`schema_phrases`) the question asks about (see the module)."""
    q = normalize(question)
    toks = tokens(question)
    used: set[int] = set()
    out: set[str] = set()
    for p in phrases:
        if _CJK.search(p):
            for m in re.finditer(re.escape(p), q):
                near = q[max(0, m.start() - WINDOW) : m.end() + WINDOW]
                if "哪" in near or "什么" in near:
                    out.add(p)
            continue
        words = p.split()
        for i in _occurrences(toks, words):
            span = set(range(i, i + len(words)))
            if span & used:
                continue  # inside a longer phrase already found
            before = [t for t in toks[max(0, i - WINDOW) : i] if t not in _ARTICLES]
            if before and before[-1] in _SUBJECT:
                continue
            around = toks[max(0, i - WINDOW) : i] + toks[i + len(words) : i + len(words) + WINDOW]
            if ASKING.intersection(around):
                out.add(p)
                used |= span
    return out
