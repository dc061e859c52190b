"""Text utilities of the free-text gate: tokens, quoted spans, fuzzy mentions, schema names.

Written by hand because they are small and language-specific: tokens are Latin words/numbers and
single CJK characters (Chinese has no spaces), and a "quoted span" is a run of at least
``MIN_SPAN`` tokens the question shares with the user's request (difflib finds the runs).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?|[\u3400-\u9fff\uf900-\ufaff]")
_IDENT_LINE = re.compile(r"^(?:VIEW )?([^\s(][^(]*?)\((.*)\)\s*$", re.M)
MIN_SPAN = 3


def normalize(text: str) -> str:
    """NFKC, case-folded (full-width letters and traditional/simplified aside)."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """Latin words/numbers and single CJK characters, normalized."""
    return _TOKEN.findall(normalize(text))


def shared_spans(question: str, request: str, min_len: int = MIN_SPAN) -> list[tuple[int, int]]:
    """``(start, length)`` token runs of the question also found in the request (>= min_len)."""
    q, r = tokens(question), tokens(request)
    sm = difflib.SequenceMatcher(None, q, r, autojunk=False)
    return [(b.a, b.size) for b in sm.get_matching_blocks() if b.size >= min_len]


def echo_fraction(question: str, request: str) -> float:
    """Share of the request's tokens that the question copies in runs of >= MIN_SPAN tokens."""
    r = tokens(request)
    if not r:
        return 0.0
    return sum(n for _, n in shared_spans(question, request)) / len(r)


def strip_quoted(question: str, request: str, min_len: int = MIN_SPAN) -> str:
    """The question's tokens (see :func:`join_tokens`) without the runs (of ``min_len`` tokens
    or more) it copies from the request."""
    q = tokens(question)
    drop = set()
    for start, n in shared_spans(question, request, min_len):
        drop.update(range(start, start + n))
    return join_tokens([t for i, t in enumerate(q) if i not in drop])


def join_tokens(toks: list[str]) -> str:
    """Tokens as text: a space between two Latin tokens, none next to a CJK character."""
    out = ""
    for t in toks:
        if out and out[-1].isascii() and t[0].isascii():
            out += " "
        out += t
    return out


def find_mention(question: str, content: str, threshold: float = 0.8) -> tuple[int, int] | None:
    """Where ``content`` (a span of the request) occurs in the question, allowing typos.

    Returns ``(start, length)`` in question tokens of the best window (as long as ``content``,
    give or take one token) whose character-level similarity reaches ``threshold``, else
    ``None``; empty content is never found.
    """
    c, q = tokens(content), tokens(question)
    if not c or not q:
        return None
    target = join_tokens(c)
    best, where = 0.0, None
    n = len(c)
    for size in sorted({max(1, n - 1), n, n + 1}):
        for i in range(0, max(1, len(q) - size + 1)):
            r = difflib.SequenceMatcher(None, join_tokens(q[i : i + size]), target).ratio()
            if r > best:
                best, where = r, (i, size)
    return where if best >= threshold else None


def mentions_specifically(
    question: str, request: str, content: str, threshold: float = 0.8, slack: int = 6
) -> bool:
    """``content`` is in the question and not only inside a long run copied from the request.

    A run copied from the request longer than ``2 * len(content) + slack`` tokens restates the
    request rather than pointing at ``content``, so it does not count.
    """
    hit = find_mention(question, content, threshold)
    if hit is None:
        return False
    i, size = hit
    limit = 2 * len(tokens(content)) + slack
    for start, n in shared_spans(question, request):
        if start <= i and i + size <= start + n and n > limit:
            return False
    return True


@lru_cache(maxsize=64)
def schema_identifiers(schema: str) -> frozenset[str]:
    """Table and column names of a ``table(col TYPE, ...)`` schema summary, normalized."""
    out: set[str] = set()
    for m in _IDENT_LINE.finditer(schema or ""):
        out.add(normalize(m.group(1).strip()))
        for col in m.group(2).split(", "):
            name = col.rsplit(" ", 1)[0].strip() if " " in col.strip() else col.strip()
            if name:
                out.add(normalize(name))
    return frozenset(out)


def identifiers_mentioned(question: str, identifiers: frozenset[str]) -> set[str]:
    """Schema names the question spells out (``snake_case`` names also as words)."""
    q = normalize(question)
    words = " " + " ".join(tokens(question)) + " "
    hits = set()
    for ident in identifiers:
        if len(ident) < 2:
            continue
        spaced = " " + " ".join(tokens(ident.replace("_", " "))) + " "
        if ident in q or (len(spaced) > 2 and spaced in words):
            hits.add(ident)
    return hits


_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)"
)


def literal_identifiers(question: str, identifiers: frozenset[str]) -> set[str]:
    """Schema names the question spells out *as identifiers* (``snake_case``, ``camelCase`` or a
    name of one token spelled as in the schema); ordinary words that happen to be column names
    ("status", "total price") do not count."""
    raw = unicodedata.normalize("NFKC", question)
    hits = set()
    # (matches start only where a word starts: from every letter of a long word the old pattern
    # scanned to the word's end, quadratic in its length; these are the same names in linear time)
    for m in _IDENTIFIER.finditer(raw):
        name = normalize(m.group(0))
        if name in identifiers:
            hits.add(name)
    return hits


_QUOTED = re.compile(  # a single quote inside a word ("Don't") neither opens nor closes a name
    r"(?<![A-Za-z0-9])'((?:[^']|(?<=[A-Za-z])'(?=[A-Za-z])){1,200})'(?![A-Za-z0-9])"
    r"|\"([^\"]{1,200})\"|“([^”]{1,200})”|「([^」]{1,200})」|‘([^’]{1,200})’"
)
_CAP_RUN = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'’.-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.?!;:]\s+|[\"'“‘]\s*)$")
_FUNCTION_CAPS = frozenset(
    "i i'm i'd is are was were do does did can could would should will which what who whom "
    "whose where when why how by about and or the a an in on for please sorry ok okay".split()
)


def named_items(question: str) -> list[str]:
    """The distinct things a question names: quoted strings, capitalised names (not at the start
    of a sentence), and the items of a Chinese ``、`` list. Gold-free."""
    q = unicodedata.normalize("NFKC", question)
    found = [next(g for g in m if g) for m in _QUOTED.findall(q)]
    rest = _QUOTED.sub(" ", q)
    for m in _CAP_RUN.finditer(rest):
        words = m.group(0).split()
        if _SENTENCE_START.search(rest[: m.start()]):
            words = words[1:]  # the sentence's first word is capitalised anyway
        while words and words[0].casefold() in _FUNCTION_CAPS:
            words = words[1:]
        if words:
            found.append(" ".join(words))
    for part in re.split(r"[?？。!！;；,，]", _QUOTED.sub("\x00", q)):
        items = [x for x in part.split("、") if x.strip()]
        if len(items) >= 2:  # a Chinese list of names (not of questions, not of quoted names)
            found += [x for x in items if "\x00" not in x and "哪" not in x and "什么" not in x]
    out: list[str] = []
    for f in found:
        k = normalize(f).strip()
        if k and k not in out:
            out.append(k)
    return out


_LIST_SEP = re.compile(r",|、|，|;|；|\bor\b|\band\b|或者|还是|或|以及")


def list_items(question: str) -> int:
    """The most alternatives one sentence of the question lists: the short parts (at most four
    tokens) between list separators ("Station, Stanton, Staunton or Stratton": 4); clauses of
    an ordinary sentence joined by "and" are not a list."""
    best = 1
    for part in re.split(r"[?？。!！]", _QUOTED.sub(" x ", question)):
        segs = [p for p in _LIST_SEP.split(part) if tokens(p)]
        if len(segs) >= 2:
            best = max(best, sum(1 for p in segs if len(tokens(p)) <= 4))
    return best


_STOP = frozenset(
    """a an the of in on at for to by with about from into and or but is are was were be been
    being do does did done you your yours i me my mine we our us it its this that these those
    what which who whom whose how when where why would like want wanted know need see get show
    tell give exactly specifically exact specific please could can should will shall may might
    there here any some anything something everything all more most much many kind sort type
    information info detail details figure figures number numbers value values measure measures
    metric metrics result results answer answers data question request mean meant just only
    also than then so as if not no yes one ones thing things part clarify unclear more look
    looking interested return report compute see sure right help let us me""".split()
)
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_CJK_GENERIC = frozenset(
    "请问 具体 什么 哪个 哪些 哪方 方面 信息 数据 指标 内容 问题 需要 想要 了解 知道 查询 您的 你的 "
    "一下 情况".split()
)


def anchored(question: str, request: str, schema_words: tuple[str, ...] = ()) -> bool:
    """The question refers to something of the request or the schema (not only to "what you
    want"): a content word of the request (or its first five letters) or of a column name; in
    Chinese, two consecutive characters of the request outside the intent cue words."""
    from clarisql.envs.simulators.gate.aspects import ASPECTS

    cues = ASPECTS[0].cues  # intent's cue words are not an anchor
    q = cues.sub(" ", normalize(question))
    req = tokens(request)
    req_set = set(req)
    cols = {w for p in schema_words for w in p.split()}
    for w in tokens(q):
        if not w.isascii() or len(w) < 3 or w in _STOP or w.isdigit():
            continue
        if w in req_set or w in cols:
            return True
        if len(w) >= 5 and any(r.startswith(w[:5]) for r in req_set if r.isascii()):
            return True
    req_text = normalize(request)
    for run in _CJK_RUN.findall(q):
        for i in range(len(run) - 1):
            bi = run[i : i + 2]
            if bi not in _CJK_GENERIC and bi in req_text:
                return True
    return False
