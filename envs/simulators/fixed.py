"""ODUTQA-MDC's gated user simulator, Fixed mode.

A clarification is revealed only when one of the agent's labels matches a gold label:
- intent: the task's intent is underspecified and the agent sent the ``intent`` label;
- scope / condition: the agent sent the exact triple ``[content, slot, kind]`` (white space and
  letter case aside).
Each matched gold label is answered from a fixed template with its gold value inserted, its slot
said in words, never as a column identifier (:meth:`FixedSimulator.slot_words`: "The billing
state I mean is WA."). When nothing matches, the reply is neutral and adds no information (and
never hints at gold values).

``gate`` chooses what is matched: ``"labels"`` (the agent's labels, as above), ``"text"`` (the
free-text question, mapped to the labels it addresses by a question mapper, see
:mod:`clarisql.envs.simulators.gate`) or ``"both"`` (either).

Bounded, precise clarification: a turn that asks about more than any task could need (labels
beyond :class:`~clarisql.envs.simulators.gate.GateRules`' bounds, one span labelled several ways,
overlapping spans; in free text too many aspects, names or alternatives at once) reveals nothing,
even the labels it got right, and is answered ``refusal_reply`` ("one thing at a time"): the same
text whatever the task and its gold, decided from the turn alone (never from the gold's size).
Over the episode, once the turns answered so far have asked about more than ``max_episode``
distinct things (labels, aspects, named values) or ``max_missing`` distinct slots, or a turn asks about a value again as another kind of
problem (a span labelled ``Error`` then ``not-exist``; "is 'X' a typo?" then "is 'X' the full
name?"), the turn reveals nothing and gets :data:`~clarisql.envs.simulators.gate.BUDGET_REPLY`:
a sweep of one guess per turn cannot walk through every slot, value and kind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clarisql.envs.simulators.base import DialogueContext, SimulatorReply, UserSimulator
from clarisql.envs.simulators.gate import (
    BUDGET_REPLY,
    BUDGET_REPLY_ZH,
    REFUSAL_REPLY,
    REFUSAL_REPLY_ZH,
)
from clarisql.envs.tasks import Label, Underspec

DEFAULT_TEMPLATES: dict[str, str] = {
    "intent": "{value}",
    "Missing": "The {slot} I mean is {value}.",
    "Error": "Sorry, I got the {slot} wrong: I meant {value}.",
    "Unmatch": "My mistake, I meant the {slot} {value}.",
    "not-exist": "The full name is {value}.",
}
_CJK = re.compile(r"[\u3400-\u9fff]")
NEUTRAL_REPLY = "I'm not sure what you are asking about. Please point out exactly what is unclear in my request."


def spoken_identifier(name: str) -> str:
    """A slot identifier in words (``BillingState`` -> ``billing state``, ``qty`` ->
    ``quantity``); a name in a script without case or word breaks (``城市``) stays as written."""
    if not name.strip() or not re.search(r"[A-Za-z]", name) or _CJK.search(name):
        return name.strip()
    from clarisql.envs.synth.names import in_words

    return in_words(name.strip())


class FixedSimulator(UserSimulator):
    """Gated, template-based replies (deterministic; no model)."""

    name = "fixed"

    def __init__(
        self,
        templates: Mapping[str, str] | None = None,
        neutral_reply: str = NEUTRAL_REPLY,
        slot_names: Mapping[str, str] | None = None,
        gate: str = "labels",
        mapper: Any = None,
        gate_rules: Mapping[str, Any] | None = None,
        refusal_reply: str | None = None,
    ):
        """``templates`` per label kind (``{value}``, ``{slot}``, ``{content}``); ``slot_names``
        renders slot types in the reply's language (e.g. ``{"city": "城市"}``); ``gate``:
        ``labels``, ``text`` or ``both``; ``mapper``: the question mapper for text gating (a
        spec for :func:`~clarisql.envs.simulators.gate.make_mapper` or an instance; default
        ``offline``); ``gate_rules``: :class:`~clarisql.envs.simulators.gate.GateRules` fields;
        ``refusal_reply``: the reply to a too-broad turn (default: "one thing at a time", in
        Chinese for a request in Chinese)."""
        from clarisql.envs.simulators.gate import GateRules

        self.templates = {**DEFAULT_TEMPLATES, **(templates or {})}
        self.neutral_reply = neutral_reply
        self.refusal_reply = refusal_reply
        self.slot_names = dict(slot_names or {})
        self.gate_rules = GateRules.from_dict(gate_rules)
        self._mapper_spec = mapper
        self._mapper: Any = None
        self._asked: set[str] = set()
        self._kinds: dict[str, tuple[str, ...]] = {}
        self._slot_of: dict[str, tuple[str, ...]] = {}
        self._episode: Any = None
        self.set_gate(gate)

    def reset(self, task: Any, seed: int | None = None) -> str:
        """Start an episode: nothing asked yet (the episode budget is full)."""
        self._asked, self._kinds, self._slot_of, self._episode = set(), {}, {}, task
        return super().reset(task, seed)

    def set_gate(self, gate: str, mapper: Any = None) -> None:
        """Switch the gate mode (``labels``, ``text`` or ``both``) and, if given, the mapper."""
        from clarisql.envs.simulators.gate import GATE_MODES

        if gate not in GATE_MODES:
            raise ValueError(f"gate must be one of {', '.join(GATE_MODES)}, got {gate!r}")
        self.gate = gate
        if mapper is not None:
            self._mapper_spec, self._mapper = mapper, None

    @property
    def mapper(self) -> Any:
        """The question mapper (built on first use: the embedding model loads lazily)."""
        if self._mapper is None:
            from clarisql.envs.simulators.gate import make_mapper

            self._mapper = make_mapper(self._mapper_spec)
        return self._mapper

    @staticmethod
    def match(labels: list[Label], gold: list[Underspec]) -> list[Underspec]:
        """Gold labels matched by the agent's labels, in gold order, each once."""
        keys = {lb.key() for lb in labels}
        intent_asked = any(lb.kind == "intent" for lb in labels)
        out = []
        for u in gold:
            if u.label.kind == "intent":
                if intent_asked:
                    out.append(u)
            elif u.label.key() in keys:
                out.append(u)
        return out

    def render(self, u: Underspec, task: Any = None) -> str:
        """The reply revealing ``u``: its kind's template, or, where the value's problem is not
        the one its kind names (a misspelled ``not-exist`` name, a cut-off ``Error`` value:
        :func:`~clarisql.envs.simulators.gate.kinds.value_problem`), the template of a kind
        that names it ("Sorry, I got the name wrong: I meant ...", "The full name is ...").
        The slot is said in words (:meth:`slot_words`), never as the column's identifier."""
        from clarisql.envs.simulators.gate.kinds import KIND_PROBLEM, WRONG, value_problem

        kind = u.label.kind
        problem = value_problem(kind, u.label.content, u.value)
        if problem is not None and problem != KIND_PROBLEM[kind]:
            kind = "Error" if problem == WRONG else "not-exist"
        tpl = self.templates.get(kind, "{value}")
        slot = self.slot_words(u.label.slot, task)
        return tpl.format(value=u.value, slot=slot, content=u.label.content)

    def slot_words(self, slot: str, task: Any = None) -> str:
        """A label's slot as the user says it: the suite's ``slot_names`` (a language's words,
        ``{"city": "城市"}``), else the task's own ``metadata["slot_words"]`` (what a
        synthesized suite's questions call the column: ``{"BillingState": "billing state"}``),
        else the identifier put in words (:func:`~clarisql.envs.synth.names.in_words`:
        ``first_name`` -> ``first name``; a plain word stays as it is), else ``value``. Only
        the slot of a label the agent earned is said, so nothing about other labels leaks."""
        if slot in self.slot_names:
            return self.slot_names[slot]
        said = getattr(task, "metadata", None) or {}
        said = said.get("slot_words") if isinstance(said, Mapping) else None
        if isinstance(said, Mapping) and isinstance(said.get(slot), str) and said[slot].strip():
            return said[slot]
        return spoken_identifier(slot) or "value"

    def text_match(self, message: str, ctx: DialogueContext) -> tuple[list[Underspec], dict]:
        """Gold labels the free-text ``message`` addresses, and what the mapper saw (public)."""
        from clarisql.envs.simulators.gate import (
            TOO_BROAD,
            GateContext,
            addressed,
            stated_kinds,
            things_asked,
        )

        request = next(
            (m.get("content", "") for m in ctx.history if m.get("role") == "user"),
            ctx.task.utterance,
        )
        gctx = GateContext(request, ctx.schema)
        mapped = self.mapper.map(message, gctx)
        hits, why = addressed(message, mapped, ctx.task.underspecs, gctx, self.gate_rules)
        info: dict[str, Any] = {
            "gate": "text",
            "mapper": mapped.source,
            "aspects": sorted(mapped.aspects),
        }
        if why:
            info["vague"] = why
        if not why or not why.startswith(TOO_BROAD):  # (a refused turn asked nothing)
            info["things"] = sorted(things_asked(message, mapped, gctx))
            info["kinds"] = stated_kinds(message, request)
        return hits, info

    def refusal(self, ctx: DialogueContext) -> str:
        """The reply to a too-broad turn: one text per suite language, whatever the gold."""
        if self.refusal_reply is not None:
            return self.refusal_reply
        return REFUSAL_REPLY_ZH if _CJK.search(ctx.task.utterance) else REFUSAL_REPLY

    def budget_spent(self, ctx: DialogueContext) -> str:
        """The reply once the episode's budget of things asked is spent (same for every task)."""
        return BUDGET_REPLY_ZH if _CJK.search(ctx.task.utterance) else BUDGET_REPLY

    def respond(self, message: str, labels: list[Label], ctx: DialogueContext) -> SimulatorReply:
        from clarisql.envs.simulators.gate import TOO_BROAD, label_breadth, label_things
        from clarisql.envs.simulators.gate.text import normalize

        gold = ctx.task.underspecs
        if ctx.task is not self._episode:  # a caller that did not reset: a new episode
            self._asked, self._kinds, self._slot_of, self._episode = set(), {}, {}, ctx.task
        info: dict[str, Any] = {}
        hits: list[Underspec] = []
        asked: set[str] = set()
        kinds: dict[str, tuple[str, ...]] = {}
        slot_of: dict[str, tuple[str, ...]] = {}
        if self.gate != "text" and labels:
            why = label_breadth(labels, self.gate_rules)
            if why is not None:
                return SimulatorReply(self.refusal(ctx), [], earned=False, info={"broad": why})
            hits = self.match(labels, gold)
            asked |= label_things(labels)
            kinds.update(
                (f"label:{normalize(lb.content.strip())}", (lb.slot.strip().casefold(), lb.kind))
                for lb in labels
                if lb.kind != "intent" and lb.content.strip()
            )
        if self.gate != "labels" and message.strip():
            text_hits, info = self.text_match(message, ctx)
            if str(info.get("vague", "")).startswith(TOO_BROAD):
                if not labels or self.gate == "text":
                    return SimulatorReply(self.refusal(ctx), [], earned=False, info=info)
                # "both": precise labels are answered; a too-broad text beside them adds nothing
                text_hits = []
            chosen = {id(u) for u in hits} | {id(u) for u in text_hits}
            hits = [u for u in gold if id(u) in chosen]
            things = set(info.pop("things", ()))
            stated = info.pop("kinds", {})
            if stated:  # "'X' looks wrong: which city?" asks one label ([X, city, ...]), not two
                slots_here = sorted(x for x in things if x.startswith("slot:"))
                things -= set(slots_here[: len(stated)])
                kinds.update((f"text:{v}", (p,)) for v, p in stated.items())
                if slots_here:  # and X stays that slot's value (no sweep of slots through X)
                    slot_of.update((f"text:{v}", tuple(slots_here)) for v in stated)
            asked |= things
        total = self._asked | asked
        slots = sum(1 for x in total if x.startswith("slot:"))
        if len(total) > self.gate_rules.max_episode or slots > self.gate_rules.max_missing:
            info = {**info, "budget": f"{len(total)} things, {slots} slots asked this episode"}
            return SimulatorReply(self.budget_spent(ctx), [], earned=False, info=info)
        if any(self._kinds.get(k, v) != v for k, v in kinds.items()) or any(
            self._slot_of.get(k, v) != v for k, v in slot_of.items()
        ):
            info = {**info, "budget": "a value asked about again as another kind of problem"}
            return SimulatorReply(self.budget_spent(ctx), [], earned=False, info=info)
        self._asked |= asked
        self._kinds.update(kinds)
        self._slot_of.update(slot_of)
        if not hits:
            return SimulatorReply(self.neutral_reply, [], earned=False, info=info)
        text = " ".join(self.render(u, ctx.task) for u in hits)
        return SimulatorReply(text, hits, earned=True, info=info)
