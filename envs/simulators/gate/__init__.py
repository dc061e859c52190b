"""Free-text gating: which gold underspecifications does a free-text question address?

Contract
- A :class:`QuestionMapper` reads a clarification question (and the public context: the user's
  request and the schema summary) into a :class:`MappedQuestion`: the *aspects* it asks about,
  taken from a fixed catalog of schema slots (:mod:`.aspects`: ``intent``, ``city``,
  ``district``, ``year``, ``enterprise``, ``project``). A mapper never sees the gold labels, so
  what it detects cannot depend on them.
- :func:`addressed` then gates against the gold labels, as the label gate does with the agent's
  labels: ``intent`` is answered when the question asks about intent; a ``Missing`` scope label
  when it asks about that slot (a catalog aspect or the column in words); a label with content
  (``Error``/``Unmatch``/``not-exist``) when the question names that content specifically (typos
  allowed) *and* states the problem the value has (:func:`.kinds.value_problem`: the full name
  when the meant value contains what was written, another value when it was misspelled or is
  outside the data), as ODUTQA-MDC's label names the kind.
  "What do you mean by '2017'?" asks nothing specific about 2017; a question stating both
  problems enumerates the kinds and is too broad.
- No leak: a question that points at nothing specific reveals nothing. It is *vague* when it asks
  about more than ``GateRules.max_aspects`` aspects at once ("which city, district, year,
  company...?"), spells out more than ``max_identifiers`` schema names (a list of every
  column), copies most of the request back (``max_echo``), or matches no aspect and no
  content ("anything unclear?", "tell me everything"). A content named only inside a long run
  copied from the request does not count (:func:`~.text.mentions_specifically`).
- Over an episode the simulator (:class:`~clarisql.envs.simulators.fixed.FixedSimulator`)
  keeps what was asked: more than ``max_episode`` distinct things (:func:`things_asked`,
  :func:`label_things`), or a value asked about again as another kind of problem
  (:func:`stated_kinds`), and the turn reveals nothing (:data:`BUDGET_REPLY`).
- Several labels addressed by one (non-vague) question are all answered in one reply, the Fixed
  simulator's rule for several labels; a suite or run sets its own limits with the simulator
  keyword ``gate_rules`` (:class:`GateRules` fields; ``simulator_kwargs: {gate_rules: {...}}``).

Mappers: :class:`~.offline.OfflineMapper` (lexical cues plus, with the ``gate`` extra, sentence
embeddings of a packaged model; no network) and :class:`~.llm.LLMMapper` (a two-stage parser
through an OpenAI-compatible endpoint, cached, falling back to the offline mapper).
:func:`make_mapper` builds one from a spec: ``"offline"``, ``"lexical"`` or
``"llm:MODEL@URL"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from clarisql.envs.simulators.gate.aspects import ASPECT_NAMES, ASPECTS
from clarisql.envs.simulators.gate.kinds import (
    enumerates_problems,
    problems,
    value_problem,
    without_problem_cues,
)
from clarisql.envs.simulators.gate.schema_aspects import asked_phrases, phrase, schema_phrases
from clarisql.envs.simulators.gate.text import (
    _QUOTED,
    anchored,
    echo_fraction,
    list_items,
    literal_identifiers,
    mentions_specifically,
    named_items,
    normalize,
    schema_identifiers,
    strip_quoted,
    tokens,
)
from clarisql.envs.simulators.gate.types import GateContext, MappedQuestion, QuestionMapper
from clarisql.envs.tasks import Label, Underspec

GATE_MODES = ("labels", "text", "both")


@dataclass(frozen=True)
class GateRules:
    """How much one clarification turn may ask before it reveals nothing (module docstring).

    The label bounds are what any task in ODUTQA-MDC's label grammar needs at most (its scope
    has three slots, city, district and year, so at most 3 Missing; its records need at most 5
    labels and 4 named spans; the built-in and synthesized suites need fewer), never a task's own
    gold size, so a refusal says nothing about the gold. The
    free-text bounds are "one thing at a time": at most ``max_aspects`` aspects, ``max_names``
    named spans or values, ``max_things`` of both together, ``max_list`` alternatives in a list.
    Over a whole episode the same bounds hold as for one turn: at most ``max_episode`` distinct
    things (labels, aspects, named values; ODUTQA-MDC's records need at most 5) and
    ``max_missing`` distinct slots; a sweep of one guess per turn over many turns gets
    :data:`BUDGET_REPLY` once either is spent (asking the same thing again costs nothing).
    """

    max_labels: int = 5
    max_missing: int = 3
    max_content: int = 4
    max_aspects: int = 2
    max_names: int = 2
    max_things: int = 2
    max_list: int = 3
    max_identifiers: int = 3
    max_echo: float = 0.8
    mention_threshold: float = 0.8
    max_episode: int = 5

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> GateRules:
        d = dict(d or {})
        known = {f.name for f in fields(cls)}
        bad = set(d) - known
        if bad:
            raise ValueError(f"gate rules: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
        return cls(**d)


#: what a too-broad turn is told: the same text whatever the task and its gold labels
REFUSAL_REPLY = (
    "Please ask about one thing at a time: point at the one part of my request that is unclear."
)
#: the same in Chinese, for a request in Chinese (ODUTQA-MDC)
REFUSAL_REPLY_ZH = "请一次只问一件事：指出我的请求里具体哪一处不清楚。"
#: what a turn is told once the episode has asked about more than any task could need
BUDGET_REPLY = (
    "You have asked about more things than my request could leave open; "
    "please go ahead with what I have told you."
)
BUDGET_REPLY_ZH = "你问的已经超过我的请求可能不清楚的地方了，请根据我已经说的继续。"
#: reasons that start with this mark a turn refused as too broad (it gets :data:`REFUSAL_REPLY`)
TOO_BROAD = "too broad: "


def label_breadth(labels: Sequence[Label], rules: GateRules | None = None) -> str | None:
    """Why a turn's labels ask about more than any task could need, or ``None``.

    Gold-free: a function of the labels alone. Too broad: more than ``max_labels`` distinct
    labels, more than ``max_missing`` Missing slots or ``max_content`` labelled spans; one span
    labelled more than one way (slot or kind) or spans that overlap (every way of cutting the
    request); a slot said to be both missing and given.
    """
    rules = rules or GateRules()
    keys = {lb.key() for lb in labels}
    if len(keys) > rules.max_labels:
        return f"{TOO_BROAD}{len(keys)} labels at once (limit {rules.max_labels})"
    missing = {lb.slot.strip().casefold() for lb in labels if lb.kind == "Missing"}
    if len(missing) > rules.max_missing:
        return f"{TOO_BROAD}{len(missing)} missing slots at once (limit {rules.max_missing})"
    spans = [  # each distinct label once: the same label sent twice is not two ways
        (normalize(lb.content.strip()), lb.slot.strip().casefold())
        for lb in {lb.key(): lb for lb in labels}.values()
        if lb.kind != "intent" and lb.content.strip()
    ]
    if len(spans) > rules.max_content:
        return f"{TOO_BROAD}{len(spans)} labelled spans at once (limit {rules.max_content})"
    texts = [c for c, _ in spans]
    if len(set(texts)) < len(texts):
        return f"{TOO_BROAD}one span labelled more than one way"
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            if a in b or b in a:
                return f"{TOO_BROAD}overlapping spans"
    if missing & {s for _, s in spans}:
        return f"{TOO_BROAD}a slot both missing and given"
    return None


def all_aspects(question: str, mapped: MappedQuestion, ctx: GateContext) -> frozenset[str]:
    """The mapper's aspects plus the schema's column phrases the question asks about; a catalog
    aspect whose cue word occurs only inside a quoted name ("'Science City'") is dropped."""
    bare = _QUOTED.sub(" ", question)
    cues = {a.name: a.cues for a in ASPECTS}
    kept = frozenset(
        a
        for a in mapped.aspects
        if a not in cues or not cues[a].search(question) or cues[a].search(bare)
    )
    return kept | asked_phrases(bare, schema_phrases(ctx.schema))


def asked_aspects(question: str, mapped: MappedQuestion, ctx: GateContext) -> frozenset[str]:
    """What the question asks *about*, for the bounds: :func:`all_aspects` of the question
    without its problem words, so "the full name of 'X'" is not also a question about a
    ``name`` column, nor (through an embedding) about a catalog aspect no cue word names."""
    if not problems(question):
        return all_aspects(question, mapped, ctx)
    bare = without_problem_cues(question)
    cues = {a.name: a.cues for a in ASPECTS}
    unquoted = _QUOTED.sub(" ", bare)
    return frozenset(
        a for a in all_aspects(bare, mapped, ctx) if a not in cues or cues[a].search(unquoted)
    )


def _count_aspects(aspects: frozenset[str]) -> int:
    """Distinct things asked: a catalog aspect inside an asked column phrase counts once
    ("which billing city" is one thing, not ``city`` and ``billing city``)."""
    phrases = [a for a in aspects if a not in ASPECT_NAMES]
    catalog = [a for a in aspects if a in ASPECT_NAMES and not any(a in p.split() for p in phrases)]
    return len(phrases) + len(catalog)


def vagueness(
    question: str, mapped: MappedQuestion, ctx: GateContext, rules: GateRules
) -> str | None:
    """Why the question points at nothing specific, or ``None`` when it is specific.

    Reasons that start with :data:`TOO_BROAD` (too many aspects, names, list items or schema
    identifiers at once) make the simulator answer :data:`REFUSAL_REPLY`.
    """
    if not mapped.specific:
        return "the mapper found no specific ambiguity in the question"
    n_aspects = _count_aspects(asked_aspects(question, mapped, ctx))
    if n_aspects > rules.max_aspects:
        return f"{TOO_BROAD}asks about {n_aspects} aspects at once (limit {rules.max_aspects})"
    n_names = len(named_items(question))
    if n_names > rules.max_names:
        return f"{TOO_BROAD}names {n_names} things at once (limit {rules.max_names})"
    if n_names + n_aspects > rules.max_things:
        return f"{TOO_BROAD}asks about {n_names + n_aspects} things (limit {rules.max_things})"
    if enumerates_problems(_cue_text(question, ctx.request)):
        return f"{TOO_BROAD}states two kinds of problem at once (another value and a full name)"
    n_items = list_items(question)
    if n_items > rules.max_list:
        return f"{TOO_BROAD}lists {n_items} alternatives (limit {rules.max_list})"
    names = literal_identifiers(question, schema_identifiers(ctx.schema))
    if len(names) > rules.max_identifiers:
        return f"{TOO_BROAD}lists {len(names)} schema names (limit {rules.max_identifiers})"
    if ctx.request and echo_fraction(question, ctx.request) > rules.max_echo:
        return "restates the request instead of asking about part of it"
    return None


def _cue_text(question: str, request: str) -> str:
    """The question's own words: without quoted names and without runs copied from the
    request (a value or request that says "wrong" or "full" states no problem)."""
    from clarisql.envs.simulators.gate.text import join_tokens, shared_spans

    bare = _QUOTED.sub(" ", question)
    toks, drop = tokens(bare), set()
    for start, n in shared_spans(bare, request):
        run = toks[start : start + n]
        if any(t.isascii() for t in run) or n >= 5:  # (Chinese: "是哪个" is how one asks)
            drop.update(range(start, start + n))
    return join_tokens([t for i, t in enumerate(toks) if i not in drop])


_NUMBER = re.compile(r"(?<![\w.])\d[\d.,:/-]*\d(?![\w.])|(?<![\w.])\d(?![\w.])")


def named_values(question: str) -> list[str]:
    """The values a question names: :func:`~.text.named_items` plus bare numbers ("2017")."""
    out = named_items(question)
    for n in _NUMBER.findall(_QUOTED.sub(" ", question)):
        if n not in out:
            out.append(n)
    return out


def things_asked(question: str, mapped: MappedQuestion, ctx: GateContext) -> frozenset[str]:
    """The distinct things a free-text turn asks about, as :func:`label_things` names them
    (``intent``, ``slot:`` an aspect, ``value:`` a named value), for the episode budget."""
    aspects = all_aspects(question, mapped, ctx)
    phrases = [a for a in aspects if a not in ASPECT_NAMES]
    slots = {
        a
        for a in aspects
        if a != "intent" and (a not in ASPECT_NAMES or not any(a in p.split() for p in phrases))
    }
    out = {f"slot:{a}" for a in slots} | {f"value:{v}" for v in named_values(question)}
    if "intent" in mapped.aspects:
        out.add("intent")
    return frozenset(out)


def label_things(labels: Sequence[Label]) -> frozenset[str]:
    """The distinct things a label turn asks about: ``intent``, ``slot:`` a Missing slot in
    words, ``value:`` a labelled span."""
    out = set()
    for lb in labels:
        if lb.kind == "intent":
            out.add("intent")
        elif lb.content.strip():
            out.add(f"value:{normalize(lb.content.strip())}")
        else:
            out.add(f"slot:{phrase(lb.slot.strip()) or normalize(lb.slot)}")
    return frozenset(out)


def stated_kinds(question: str, request: str) -> dict[str, str]:
    """Each value the question names, with the one problem it states about it (none when the
    question states no problem): what the episode remembers so that the same value cannot be
    asked about as a typo in one turn and as a partial name in the next."""
    stated = problems(_cue_text(question, request))
    if len(stated) != 1:
        return {}
    (p,) = stated
    return {v: p for v in named_values(question)}


def _slot_asked(question: str, slot: str, aspects: frozenset[str]) -> bool:
    """The slot is among the asked aspects, or the question asks about the slot in words (a
    slot that is no column, e.g. a synthesized ``EndDate year``)."""
    s = slot.strip()
    words = phrase(s)
    if s.casefold() in aspects or words in aspects or asked_phrases(question, (words,)):
        return True
    # the slot's head noun asked on its own: "which country" for ``BillingCountry``
    head = words.split()[-1] if words else ""
    if len(head) >= 3 and head != words and asked_phrases(question, (head,)):
        return True
    return any(words.endswith(" " + a) for a in aspects if a != "intent")


def addressed(
    question: str,
    mapped: MappedQuestion,
    gold: Sequence[Underspec],
    ctx: GateContext,
    rules: GateRules | None = None,
) -> tuple[list[Underspec], str | None]:
    """The gold labels the question addresses (gold order), and the vagueness reason if any.

    ``intent`` needs the intent aspect *and* an anchor in the request or the schema (a generic
    "what would you like to know?" reveals nothing); a Missing slot needs the slot asked about
    (catalog aspect or the column in words); a labelled span needs the span named *and* the
    problem the value has (:func:`.kinds.value_problem`: a full name when the meant value
    contains what was written, a typo or another value otherwise): "What do you mean by
    '2017'?" names a value but asks nothing specific about it.
    """
    rules = rules or GateRules()
    why = vagueness(question, mapped, ctx, rules)
    if why is not None:
        return [], why
    aspects = all_aspects(question, mapped, ctx)
    intent = "intent" in aspects and anchored(question, ctx.request, schema_phrases(ctx.schema))
    stated = problems(_cue_text(question, ctx.request))
    out = []
    for u in gold:
        lb = u.label
        if lb.kind == "intent":
            hit = intent
        elif lb.content.strip():
            need = value_problem(lb.kind, lb.content, u.value)
            hit = (need is None or need in stated) and mentions_specifically(
                question, ctx.request, lb.content, rules.mention_threshold
            )
        else:
            hit = _slot_asked(question, lb.slot, aspects)
        if hit:
            out.append(u)
    if not out and (not aspects or aspects == {"intent"} and not intent):
        return [], "matches no specific aspect of the request"
    return out, None


def make_mapper(spec: str | QuestionMapper | None = None, **kwargs: Any) -> QuestionMapper:
    """``"offline"`` (default: lexical + embeddings when the ``gate`` extra is installed),
    ``"lexical"`` (no embeddings) or ``"llm:MODEL@URL"`` (keyword options go to the mapper)."""
    if isinstance(spec, QuestionMapper):
        return spec
    from clarisql.envs.simulators.gate.offline import OfflineMapper

    name = spec or "offline"
    if name == "offline":
        return OfflineMapper(**kwargs)
    if name == "lexical":
        return OfflineMapper(embeddings=False, **kwargs)
    if name.startswith("llm:"):
        from clarisql.envs.simulators.gate.llm import LLMMapper

        return LLMMapper(name[4:], **kwargs)
    raise ValueError(
        f"unknown question mapper {spec!r}: expected offline, lexical or llm:MODEL@URL"
    )


__all__ = [
    "ASPECT_NAMES",
    "BUDGET_REPLY",
    "BUDGET_REPLY_ZH",
    "label_things",
    "named_values",
    "stated_kinds",
    "things_asked",
    "REFUSAL_REPLY",
    "REFUSAL_REPLY_ZH",
    "TOO_BROAD",
    "label_breadth",
    "GATE_MODES",
    "GateContext",
    "GateRules",
    "MappedQuestion",
    "QuestionMapper",
    "addressed",
    "make_mapper",
    "strip_quoted",
    "tokens",
    "vagueness",
]
