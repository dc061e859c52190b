"""What a question says is wrong with a value it names: the free-text form of a label's kind.

ODUTQA-MDC's label for a named span is ``[content, slot, kind]``, and the Fixed simulator answers
only the right kind. In free text the same precision is asked of a question about a span: naming
the span is not enough ("What do you mean by '2017'?" asks nothing specific, and a question
naming every value of a request would otherwise earn whichever of them was unclear); the question
must also say *what* is unclear about it, one of two problems:

- ``wrong`` (``Error``, ``Unmatch``: the value as written fits nothing, the user meant another
  one): "is 'Eastgate' a typo?", "there are no invoices in 2017: which year instead?", "did you
  mean another district?", "can't find 'Bil'";
- ``partial`` (``not-exist``: the value is part of a longer name, several things match):
  "what is the full name of 'Eric'?", "several composers start with 'Eric': which one?".

Which problem a question must state follows what is actually wrong with the written value
relative to the value meant (:func:`value_problem`), not the label's kind alone: a surface the
meant value *contains* (cut short, a left-out word: :func:`~clarisql.envs.explorers.contains`) is
``partial``; a misspelled surface, or one outside the data, is ``wrong``. So a misspelled
``not-exist`` name asks for another value and a cut-off ``Error`` scope value for the full name,
and the problem cannot be read off the kind a surface suggests (a number, one word): an agent
finds it in the data (``LIKE '%X%'`` matches several values: partial; nothing close: wrong).
Where the relation cannot be decided (no content, no meant value) the kind decides
(:data:`KIND_PROBLEM`).

A question that states both problems enumerates the kinds (the free-text form of one span
labelled several ways) and is too broad. Cues are English and Chinese; they are
the same for every task, so what a question states never depends on the gold.
"""

from __future__ import annotations

import re

from clarisql.envs.explorers import contains, levenshtein, made_from, typo_bound

WRONG = "wrong"
PARTIAL = "partial"
#: the problem each label kind is where the written value and the meant one cannot be compared
KIND_PROBLEM = {"Error": WRONG, "Unmatch": WRONG, "not-exist": PARTIAL}


def value_problem(kind: str, surface: str, meant: str | None) -> str | None:
    """The problem a question about the written value ``surface`` must state, when the user
    meant ``meant`` (the label's clarification value): ``partial`` when ``meant`` contains the
    surface (it is cut short or leaves a word out), ``wrong`` when it is a misspelling of it
    (within :func:`~clarisql.envs.explorers.typo_bound` edits) or a name made up from it
    (:func:`~clarisql.envs.explorers.made_from`); the kind's own problem when the two are not
    related by spelling at all (a vague criterion and what it means). ``None`` for a kind without a named value (``intent``, ``Missing``);
    the kind's own problem (:data:`KIND_PROBLEM`) when there is nothing to compare (no surface,
    no meant value, or the two are the same text)."""
    base = KIND_PROBLEM.get(kind)
    if base is None:
        return None
    s, m = (surface or "").strip(), (meant or "").strip()
    if not s or not m or s.casefold() == m.casefold():
        return base
    if contains(s, m):
        return PARTIAL
    bound = typo_bound(s)
    if levenshtein(s.casefold(), m.casefold(), bound) <= bound or made_from(s, m):
        return WRONG  # a misspelling, or a name made up from the one meant
    # no spelling relation at all (a vague criterion, "suited to my diet" for "I eat vegan"):
    # nothing in the value says which problem it has, and the kind decides
    return base


_PARTIAL = re.compile(
    r"\b(?:full|complete|whole|entire|exact|official|registered|proper|formal)\s+"
    r"(?:\w+\s+)?(?:name|names|title|titles|form|wording|value|version|text|entry|one)\b"
    r"|\b(?:full|complete|whole|entire)\s+(?:\w+\s+){0,2}?(?:for|of|that|which|behind)\b"
    r"|\bfull[- ]length\b|\bcalled exactly\b|\bnamed exactly\b|\bin full\b|\bspell\w* (?:it )?out\b"
    r"|\bexactly as\b|\bas (?:it is|it's|they are) (?:recorded|stored|listed|written)\b"
    r"|\b(?:short|shortened|abbreviation|abbreviated|truncated|partial|incomplete)\b"
    r"|\bpart of (?:a|the|its) (?:longer )?(?:name|title)\b|\bonly part\b"
    r"|\b(?:several|multiple|many|more than one|two or more|a few)\b[^?.!;]{0,40}"
    r"\b(?:match|matches|start|starts|begin|begins|contain|contains|include|includes|named|called|with)\b"
    r"|\b(?:start|starts|starting|begin|begins|beginning) with\b|\bcontaining\b"
    r"|全称|全名|完整|正式名称|简称|缩写|多个|好几个|不止一个",
    re.I,
)
_WRONG = re.compile(
    r"\b(?:typo|typos|misspel\w*|mis-?typed|spelt|spelled|spelling|wrong|wrongly|incorrect"
    r"|incorrectly|mistaken|mistake|error|correct|correctly|valid|invalid|mismatch\w*)\b"
    r"|\b(?:another|different|instead|other than|supposed to be|double-?check|the right)\b"
    r"|\bother\b[^?.!]{0,40}\bthan\b|\b(?:looks?|seems?|sounds?) off\b|\breplac\w*|\bsubstitut\w*|\bcorrection\b"
    r"|\b(?:doesn't|does not|don't|do not|didn't|did not|isn't|is not|aren't|are not|wasn't|was not)"
    r"\s+(?:\w+\s+){0,2}(?:exist|exists|match|matches|appear|appears|belong|belongs|fit|fits|"
    r"seem|look|found|listed|recorded|in|on|there|present|available)\b"
    r"|\b(?:can't|cannot|can not|couldn't|could not)\s+(?:find|see|match|locate)\b"
    r"|\bno\s+(?:such|data|record|records|row|rows|entry|entries|result|results|match|matches)\b"
    r"|\bnot\s+(?:found|listed|recorded|present|available)\b|\bnothing (?:for|under|called|named|in)\b"
    r"|\bthere (?:is|are|was|were) no\b|\bhas no\b|\bhave no\b|\bnone (?:for|in|with|called|named)\b"
    r"|写错|错了|有误|笔误|不对|对吗|正确|不存在|没有|找不到|查不到|不匹配|不属于|应该是|确认",
    re.I,
)
_STRONG_WRONG = re.compile(
    r"\b(?:typo|typos|misspel\w*|mis-?typed|spelt|wrong|wrongly|incorrect|incorrectly|mistake"
    r"|mistaken|another|different|instead|supposed to be|mismatch\w*|belong|belongs|replac\w*)\b"
    r"|写错|错了|笔误|不对|不匹配|不属于|应该是",
    re.I,
)


def problems(question: str) -> set[str]:
    """The problem the question states about the value it names: ``{"partial"}``,
    ``{"wrong"}``, both (it enumerates the kinds: see :func:`enumerates_problems`) or none.
    A weak "not found" beside a full-name cue is ``partial``: "I can't find 'Eric': what is the
    full name?" asks about the full name."""
    out = set()
    if _PARTIAL.search(question):
        out.add(PARTIAL)
    if _WRONG.search(question) and (PARTIAL not in out or _STRONG_WRONG.search(question)):
        out.add(WRONG)
    return out


def without_problem_cues(question: str) -> str:
    """The question with the words that state a problem taken out ("What is the full name of
    'X'?" -> "What is the of 'X'?"): what is left is what it asks *about*."""
    return _WRONG.sub(" ", _PARTIAL.sub(" ", question))


def enumerates_problems(question: str) -> bool:
    """The question states both problems (a typo or another value *and* a full name): the
    free-text form of one span labelled several ways, too broad whatever it names."""
    return len(problems(question)) > 1
