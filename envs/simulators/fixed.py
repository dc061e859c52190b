"""ODUTQA-MDC's gated user simulator, Fixed mode.

A clarification is revealed only when one of the agent's labels matches a gold label:
- intent: the task's intent is underspecified and the agent sent the ``intent`` label;
- scope / condition: the agent sent the exact triple ``[content, slot, kind]`` (white space and
  letter case aside).
Each matched gold label is answered from a fixed template with its gold value inserted. When
nothing matches, the reply is neutral and adds no information (and never hints at gold values).
"""

from __future__ import annotations

from collections.abc import Mapping

from clarisql.envs.simulators.base import DialogueContext, SimulatorReply, UserSimulator
from clarisql.envs.tasks import Label, Underspec

DEFAULT_TEMPLATES: dict[str, str] = {
    "intent": "{value}",
    "Missing": "The {slot} I mean is {value}.",
    "Error": "Sorry, I got the {slot} wrong: I meant {value}.",
    "Unmatch": "My mistake, I meant the {slot} {value}.",
    "not-exist": "The full name is {value}.",
}
NEUTRAL_REPLY = "I'm not sure what you are asking about. Please point out exactly what is unclear in my request."


class FixedSimulator(UserSimulator):
    """Gated, template-based replies (deterministic; no model)."""

    name = "fixed"

    def __init__(
        self,
        templates: Mapping[str, str] | None = None,
        neutral_reply: str = NEUTRAL_REPLY,
        slot_names: Mapping[str, str] | None = None,
    ):
        """``templates`` per label kind (``{value}``, ``{slot}``, ``{content}``); ``slot_names``
        renders slot types in the reply's language (e.g. ``{"city": "城市"}``)."""
        self.templates = {**DEFAULT_TEMPLATES, **(templates or {})}
        self.neutral_reply = neutral_reply
        self.slot_names = dict(slot_names or {})

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

    def render(self, u: Underspec) -> str:
        tpl = self.templates.get(u.label.kind, "{value}")
        slot = self.slot_names.get(u.label.slot, u.label.slot) or "value"
        return tpl.format(value=u.value, slot=slot, content=u.label.content)

    def respond(self, message: str, labels: list[Label], ctx: DialogueContext) -> SimulatorReply:
        hits = self.match(labels, ctx.task.underspecs)
        if not hits:
            return SimulatorReply(self.neutral_reply, [], earned=False)
        return SimulatorReply(" ".join(self.render(u) for u in hits), hits, earned=True)
