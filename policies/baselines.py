"""Scripted baselines. The degenerate ones exist to show that rewards cannot be gamed.

- ``oracle``: clarifies exactly the gold labels (one question), abstains on unanswerable tasks,
  runs the gold SQL / golden actions, stops.
- ``answer-without-clarifying`` (``naive``): never asks and never abstains; runs the SQL a
  literal reading of the question gives (``task.metadata["naive_sql"]`` / ``["naive_actions"]``,
  falling back to the gold SQL only for well-specified tasks).
- ``abstain-all``: abstains at once. ``stop-at-once``: stops at once with no answer.
- ``clarify-every-turn``: asks a question with every label kind on every turn.
- ``oracle-text``: the oracle asking in free text, without labels (its own question templates,
  :mod:`clarisql.policies.text_questions`, one thing at a time), for free-text gating
  (``gate="text"``); it answers from what the replies told it: the gold query only when every
  gold value came back, else the literal reading.
- ``ask-everything``: a probe of free-text gating: one question about every aspect at once
  (quoting the request back), then the gold SQL if the reply revealed every gold value, else the
  naive SQL; it must score below the oracle.
- ``random``: seeded random actions (questions with random labels, simple SELECTs, abstain, stop).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from clarisql.envs.tasks import Task
from clarisql.policies.base import ActionLike, Observation, Policy, ScriptedPolicy


class OraclePolicy(ScriptedPolicy):
    """Clarifies the gold labels, then runs the gold SQL; ``text=True`` asks in free text."""

    name = "oracle"

    def __init__(self, text: bool = False, max_aspects: int = 2):
        super().__init__()
        self.text = bool(text)
        self.max_aspects = int(max_aspects)

    def plan(self, task: Task) -> Sequence[ActionLike]:
        if not task.answerable:
            return [{"type": "abstain", "reason": "the database cannot answer this request"}]
        steps: list[ActionLike] = []
        if task.underspecs and self.text:
            from clarisql.policies.text_questions import questions_for

            steps += [
                {"type": "clarify", "question": q, "labels": []}
                for q, _ in questions_for(task, self.max_aspects)
            ]
        elif task.underspecs:
            steps.append(
                {
                    "type": "clarify",
                    "question": "Could you clarify: "
                    + "; ".join(_ask(u.label.to_json()) for u in task.underspecs)
                    + "?",
                    "labels": [u.label.to_json() for u in task.underspecs],
                }
            )
        steps += [{"type": "execute", "sql": a} for a in task.gold_actions]
        steps.append(
            {"type": "stop", "sql": task.gold_sql}
            if task.gold_sql
            else {"type": "stop", "sql": None}
        )
        return steps


def _ask(label: Any) -> str:
    if label == "intent":
        return "what exactly do you want to know"
    content, slot, kind = label
    if kind == "Missing":
        return f"which {slot} do you mean"
    return f"what do you mean by '{content}' ({slot})"


class OracleTextPolicy(OraclePolicy):
    name = "oracle-text"

    def __init__(self, max_aspects: int = 2):
        super().__init__(text=True, max_aspects=max_aspects)

    def plan(self, task: Task) -> Sequence[ActionLike]:
        self._task, self._told, self._asked, self._decided = task, "", False, False
        return super().plan(task)

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        """Asks its questions, then answers from what the replies told it: the gold query only
        when every gold value was revealed (the replies are read, not assumed), else the literal
        reading (``answer-without-clarifying``)."""
        if self._asked:
            self._told += " " + str(observation.get("last", ""))
        nxt = self._plan[0] if self._plan else None
        self._asked = isinstance(nxt, dict) and nxt.get("type") == "clarify"
        if not self._asked and not self._decided and self._task.underspecs:
            self._decided = True
            if not all(u.value in self._told for u in self._task.underspecs):
                self._plan = list(AnswerWithoutClarifyingPolicy().plan(self._task))
        return self._plan.pop(0) if self._plan else {"type": "stop", "sql": None}


class AskEverythingPolicy(ScriptedPolicy):
    """The ask-about-everything probe (see the module docstring)."""

    name = "ask-everything"

    def plan(self, task: Task) -> Sequence[ActionLike]:
        from clarisql.policies.text_questions import everything_question

        self._task, self._decided = task, False
        return [{"type": "clarify", "question": everything_question(task), "labels": []}]

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        if not self._plan and not self._decided:
            self._decided = True
            task, told = self._task, str(observation.get("last", ""))
            revealed_all = all(u.value in told for u in task.underspecs)
            plan = (OraclePolicy() if revealed_all else AnswerWithoutClarifyingPolicy()).plan(task)
            self._plan = [a for a in plan if not (isinstance(a, dict) and a["type"] == "clarify")]
        return self._plan.pop(0) if self._plan else {"type": "stop", "sql": None}


class AnswerWithoutClarifyingPolicy(ScriptedPolicy):
    name = "answer-without-clarifying"

    def plan(self, task: Task) -> Sequence[ActionLike]:
        md = task.metadata
        if task.writable:
            actions = md.get("naive_actions")
            if actions is None:
                actions = (
                    task.gold_actions
                    if task.category == "well-specified" or not task.underspecs
                    else []
                )
            return [
                *({"type": "execute", "sql": a} for a in actions),
                {"type": "stop", "sql": None},
            ]
        sql = md.get("naive_sql")
        if sql is None:
            sql = task.gold_sql if task.answerable and not task.underspecs else "SELECT NULL"
        return [{"type": "stop", "sql": sql}]


class AbstainAllPolicy(Policy):
    name = "abstain-all"

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return {"type": "abstain", "reason": "abstain-all baseline"}


class StopAtOncePolicy(Policy):
    name = "stop-at-once"

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return {"type": "stop", "sql": None}


class ClarifyEveryTurnPolicy(Policy):
    name = "clarify-every-turn"

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return {
            "type": "clarify",
            "question": "What exactly do you mean?",
            "labels": [
                "intent",
                ["", "year", "Missing"],
                ["", "city", "Missing"],
                ["", "district", "Missing"],
            ],
        }


_TABLE_LINE = re.compile(r"^(\w+)\(", re.M)


class RandomPolicy(Policy):
    """Uniform over action types; seeded (``seed``) and reproducible."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        k = int(self.rng.integers(4))
        tables = _TABLE_LINE.findall(observation.get("schema", "")) or ["sqlite_schema"]
        table = tables[int(self.rng.integers(len(tables)))]
        if k == 0:
            slot = ["year", "city", "district"][int(self.rng.integers(3))]
            label = "intent" if self.rng.random() < 0.3 else ["", slot, "Missing"]
            return {"type": "clarify", "question": f"Which {slot}?", "labels": [label]}
        if k == 1:
            return {"type": "execute", "sql": f"SELECT * FROM {table} LIMIT 5"}
        if k == 2:
            return {"type": "abstain", "reason": "random"}
        return {"type": "stop", "sql": f"SELECT count(*) FROM {table}"}
