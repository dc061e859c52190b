"""Free-text clarification questions for privileged scripted policies (text gating).

:func:`questions_for` writes the oracle's questions for a task's gold labels in the language of
the request (Chinese for a request in Chinese, else English), one thing at a time as the gate
wants (:class:`clarisql.envs.simulators.gate.GateRules`): the intent and Missing slots in groups
of at most ``max_aspects``, each named span in a question of its own. The intent question names
a word of the request (an anchor), since a generic "what do you want to know?" reveals nothing;
a Missing slot is asked by its name in words (``BillingState``: "which billing state"); a named
span with the problem the value has (the full name when the meant value contains what was
written, another value when it is misspelled or outside the data), as the gate asks
(:func:`clarisql.envs.simulators.gate.kinds.value_problem`).
:func:`everything_question` is the ask-about-everything probe's question: every aspect of the
catalog at once, plus the whole request quoted back.
"""

from __future__ import annotations

import re

from clarisql.envs.tasks import Task, Underspec

_CJK = re.compile(r"[\u3400-\u9fff]")
SLOT_CN = {
    "city": "城市",
    "district": "区",
    "year": "年份",
    "enterprise": "企业",
    "project": "项目",
}


def is_chinese(text: str) -> bool:
    return bool(_CJK.search(text))


def _aspect(u: Underspec) -> str:
    return "intent" if u.label.kind == "intent" else u.label.slot


_STOPISH = re.compile(
    r"^(?:what|which|when|where|show|tell|give|please|could|would|should|there|particular|"
    r"specific|working|looking|thinking)$"
)


def anchor(text: str, avoid: tuple[str, ...] = ()) -> str:
    """A word (English) or up to four characters (Chinese) of the request for the intent
    question, outside the spans in ``avoid`` (naming a labelled span would ask about it too),
    unless nothing else is left ("How did <name> do for 2021?")."""
    rest = text
    for a in avoid:
        if a.strip():
            rest = rest.replace(a, " | ")
    if avoid and rest != text:
        got = anchor(rest)
        return got if got not in ("request", "") else anchor(text)
    if is_chinese(text):
        runs = [
            re.sub(r"^(?:请问|请告知|请|就|在|住在|关于|的)+", "", r)
            for r in re.findall(r"[\u3400-\u9fff]{2,}", text)
        ]
        runs = sorted((r for r in runs if len(r) >= 2), key=len, reverse=True)
        return runs[0][:4] if runs else ""
    from clarisql.envs.simulators.gate.aspects import ASPECTS
    from clarisql.envs.simulators.gate.text import _STOP

    words = [
        re.sub(r"['’]s$", "", w)
        for w in re.findall(r"[A-Za-z][A-Za-z'’-]+", text)
        if "'" not in w[:-2] and "’" not in w[:-2]
    ]
    words = [
        w
        for w in words
        if len(w) >= 3
        and w.lower() not in _STOP
        and not _STOPISH.match(w.lower())
        and not any(a.cues.search(w) for a in ASPECTS)
    ]
    return max(words, key=len).lower() if words else "request"


def _slot_words(slot: str) -> str:
    from clarisql.envs.simulators.gate.schema_aspects import phrase

    return phrase(slot) or slot


def ask_one(u: Underspec, chinese: bool, anchor_text: str = "") -> str:
    """One clause asking about ``u`` (never naming its gold value)."""
    from clarisql.envs.simulators.gate.kinds import PARTIAL, value_problem

    lb = u.label
    partial = value_problem(lb.kind, lb.content, u.value) == PARTIAL
    if chinese:
        slot = SLOT_CN.get(lb.slot, lb.slot)
        if lb.kind == "intent":
            return f"关于{anchor_text}，你具体想了解哪方面的信息？"
        if lb.kind == "Missing":
            return "请问是哪一年？" if lb.slot == "year" else f"请问是哪个{slot}？"
        if partial:
            return f"“{lb.content}”的全称是什么？"
        return f"您说的“{lb.content}”好像不对，应该是哪个{slot}？"
    slot = _slot_words(lb.slot)
    if lb.kind == "intent":
        return f"What exactly do you want to know about the {anchor_text}?"
    if lb.kind == "Missing":
        return f"Which {slot} do you mean?"
    if partial:
        return f"What is the full name of '{lb.content}'?"
    return f"'{lb.content}' does not match the data: which {slot} did you mean instead?"


def questions_for(task: Task, max_aspects: int = 2) -> list[tuple[str, list[Underspec]]]:
    """``(question, labels it asks about)`` groups covering every gold label of ``task``: intent
    and Missing slots in groups of at most ``max_aspects``, each named span on its own."""
    chinese = is_chinese(task.utterance)
    where = anchor(task.utterance, tuple(u.label.content for u in task.underspecs))
    groups: list[list[Underspec]] = []
    for u in task.underspecs:
        if u.label.content.strip():
            groups.append([u])
            continue
        for g in groups:
            if g[0].label.content.strip():
                continue
            aspects = {_aspect(x) for x in g} | {_aspect(u)}
            if len(aspects) <= max_aspects:
                g.append(u)
                break
        else:
            groups.append([u])
    sep = "" if chinese else " "
    return [(sep.join(ask_one(u, chinese, where) for u in g), g) for g in groups]


def everything_question(task: Task) -> str:
    """Every aspect at once, quoting the whole request (the probe's question)."""
    if is_chinese(task.utterance):
        return (
            f"关于“{task.utterance}”：你具体想了解什么？是哪个城市、哪个区、哪一年？"
            "企业和项目的全称是什么？还有什么不清楚的都告诉我。"
        )
    return (
        f"About '{task.utterance}': what exactly do you want to know, which city, district and "
        "year, and what are the full names of the companies and projects? Tell me everything "
        "that is unclear."
    )
