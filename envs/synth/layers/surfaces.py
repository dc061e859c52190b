"""How a value is written unclearly: cut short or misspelled, and which of the two it is.

The free-text gate asks a question about a written value to state its problem
(:func:`clarisql.envs.simulators.gate.kinds.value_problem`): ``partial`` when the value meant
contains the surface (:func:`cut_offs`: its first words, a left-out last word, a word cut off
mid-way; a surface is used only where every value it fits starts with it), ``wrong`` when it does not (:func:`misspellings`: a letter swapped, dropped or
doubled; :func:`misnamed`: a name the data lacks). :func:`problem_of` is that rule;
:func:`listed` tells the columns whose values join several items (credit lists, addresses),
which no user writes whole or cuts short. Pure functions of their arguments (and ``rng``).
"""

from __future__ import annotations

import random
from typing import Any

from clarisql.envs.explorers import HALF, contains, tokens
from clarisql.envs.synth.column_roles import joins_items
from clarisql.envs.synth.layers.common import _STOP

#: the two problems a written value can have (:mod:`clarisql.envs.simulators.gate.kinds`)
PARTIAL, WRONG = "partial", "wrong"
#: the letters (fewest, most) another value lends a made-up name's ending: fewer than
#: :data:`~clarisql.envs.explorers.HALF`, so the name does not read as that value's tail
BLEND_TAIL = (2, HALF - 1)
#: misspellings tried per seed value (each checked against the seed's close neighbours only)
TYPO_TRIES = 40


#: Many values join several items (a credit list, an address): no name a user writes whole
#: or cuts short. The one detector of joined items lives in
#: :mod:`~clarisql.envs.synth.column_roles` (:func:`~.column_roles.joined_items`).
listed = joins_items


def cut_offs(rng: random.Random, value: str) -> list[str]:
    """The ways ``value`` can be cut short, in random order: its first words (a left-out last
    word or more, not ending on a stop word) and, in each word of >= 6 letters, one cut
    mid-word (4 letters or more of the word kept, 2 or more left out). Each is >= 4 characters
    and is contained in ``value`` (:func:`~clarisql.envs.explorers.contains`); what a cut at a
    word leaves out has letters (not only a number)."""
    words = value.split(" ")
    out = []
    for k in range(1, len(words)):
        head = " ".join(words[:k]).rstrip(",.;:-&/ ")
        last = words[k - 1].strip(",.;:-&/").casefold()
        rest = " ".join(words[k:])  # what is left out has letters: "Suite" for "Suite 239" is
        if not any(ch.isalpha() for ch in rest):  # no name anyone remembers
            continue
        if len(head) >= 4 and last and last not in _STOP and any(ch.isalpha() for ch in last):
            out.append(head)
    for i, w in enumerate(words):
        if len(w) >= 6 and w.isalpha():
            out += [" ".join([*words[:i], w[:k]]) for k in range(4, len(w) - 1)]
    out = [x for x in dict.fromkeys(out) if x.casefold() != value.casefold()]
    rng.shuffle(out)
    return out


def _cased(word: str, like: str) -> str:
    """``word`` in the letter case of ``like`` (upper, capitalised or lower)."""
    if like.isupper():
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word.lower()


def misnamed(rng: random.Random, value: str, others: list[str]) -> list[str]:
    """Names the data lacks, made from ``value`` and the column's ``others`` (what a user who
    misremembers a name writes): one word of >= 4 letters swapped for a word of another value,
    or, for a name of one word (or, half the time, the first word of a longer name), most of
    it with a different ending: its head (>= :data:`~clarisql.envs.explorers.HALF` letters,
    all but its last 3 or more) joined where a vowel meets a consonant to the last
    :data:`BLEND_TAIL` letters of another value ("Francis" -> "Franell" with "Darnell"), in
    ``value``'s letter case. It reads as ``value`` misspelled, never as the tail of one
    value glued to another (the tail is too short to name the value it came from). The
    caller keeps those no value contains, none is within a typo's reach of, and whose
    readings (:func:`~clarisql.envs.explorers.made_from`: a shared word or half) all begin
    as the surface does (:func:`begins_alike`)."""
    words = value.split(" ")
    pool = [w for o in others for w in str(o).split(" ") if len(w) >= 4 and w.isalpha()]
    out = []
    vowels = set("aeiouyAEIOUY")
    for _ in range(8):
        if not pool:
            break
        other = rng.choice(pool)
        head = words[0]
        if len(words) > 1 and len(head) >= 4 and head.isalpha() and rng.random() < 0.5:
            # a name of several words misremembered as one ("Carolyn" for "Carol Peacock
            # Trio"), so that one word is no sign of a cut-off
            words = [head]
        if len(words) > 1:
            idx = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
            if not idx:
                break
            i = rng.choice(idx)
            if other.casefold() in {w.casefold() for w in words}:
                continue  # ("Ines Ines" for "Ines Fir": a word the name holds already)
            out.append(" ".join([*words[:i], _cased(other, words[i]), *words[i + 1 :]]))
        elif len(words[0]) >= 4 and words[0].isalpha():
            one = words[0]
            # the head keeps >= HALF letters (what explorers.made_from reads it by) and the
            # other value lends a short ending only, so the name reads as this one misspelled
            joins = [
                (k, m)
                for k in range(HALF, len(one) - BLEND_TAIL[0] + 1)
                for m in range(max(1, len(other) - BLEND_TAIL[1]), len(other) - BLEND_TAIL[0] + 1)
                if (one[k - 1] in vowels) != (other[m] in vowels)
                and one[k - 1].casefold() != other[m - 1].casefold()  # (a longer tail)
                and abs(k + len(other) - m - len(one)) <= 1
            ]
            if joins:
                k, m = rng.choice(joins)
                out.append(_cased(one[:k] + other[m:].lower(), one))
        words = value.split(" ")
    return [
        x
        for x in dict.fromkeys(out)
        if len(x) >= 4 and x.casefold() != value.casefold() and not contains(x, value)
    ]


def misspellings(value: str) -> list[str]:
    """Every one-letter misspelling of ``value`` :func:`~.common.typo` can make: in one word of
    >= 4 letters, a letter (not the first or last) swapped with the next, dropped or doubled."""
    words = value.split(" ")
    out = []
    for i, w in enumerate(words):
        if len(w) < 4 or not w.isalpha():
            continue
        for j in range(1, len(w) - 2):
            for m in (w[:j] + w[j + 1] + w[j] + w[j + 2 :], w[:j] + w[j + 1 :], w[: j + 1] + w[j:]):
                out.append(" ".join([*words[:i], m, *words[i + 1 :]]))
    return [x for x in dict.fromkeys(out) if x.casefold() != value.casefold()]


def begins_alike(surface: str, value: Any) -> bool:
    """Whether ``value`` begins as ``surface`` does: its first word is the surface's first word
    or, for a one-word surface, starts with the surface's first
    :data:`~clarisql.envs.explorers.HALF` letters (case-folded), and for a surface of several
    words it holds most of them. A name a user writes keeps the
    start of the name meant: "Back" is no way to write "Holding Back The Years", nor "Gutincis"
    (a head of one name and the tail of "Francis") a way to write Francis."""
    mine, have = tokens(str(surface)), tokens(str(value))
    if not mine or not have:
        return False
    if len(mine) == 1 and len(mine[0]) >= HALF:
        return have[0].startswith(mine[0][:HALF])
    # a name of several words: the same first word, and most of the surface's words (a word
    # swapped for another value's: "São José dos Paulo" reads as São José dos Campos, not as
    # São Paulo)
    return have[0] == mine[0] and 2 * sum(w in have for w in mine) > len(mine)


def problem_of(surface: Any, meant: Any) -> str:
    """What is wrong with the written ``surface`` when ``meant`` was meant: ``partial`` when
    ``meant`` contains it (cut short), else ``wrong`` (the gate's rule)."""
    return PARTIAL if contains(str(surface), meant) else WRONG


__all__ = [
    "BLEND_TAIL",
    "PARTIAL",
    "WRONG",
    "begins_alike",
    "cut_offs",
    "listed",
    "misnamed",
    "misspellings",
    "problem_of",
]
