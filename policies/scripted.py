"""Scripted policies for regression tests and for replaying saved trajectories.

- :class:`ReplayPolicy` (``make_policy("replay")``, privileged): runs the task's golden actions
  as ``execute`` actions, then stops (with the gold query for a read task, else with no SQL).
  On a DySQL task it must score 1: it reaches the gold state by construction.
- :class:`ScriptPolicy` (``make_policy("script:FILE")``): FILE is a JSON object mapping task ids
  to lists of actions (structured dicts as :meth:`ClarifySQLEnv.step` takes them, or canonical
  tool-call text); it plays the task's list in order, then stops. It reads the task id from the
  reset ``info`` (not privileged). A missing or malformed file, or an action that does not
  parse, raises :class:`ScriptError` when the policy is made (naming the file, the task and the
  action index); a task id the file lacks raises :class:`ScriptError` at ``reset``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clarisql.envs.actions import ActionError, parse_action
from clarisql.envs.tasks import Task
from clarisql.policies.base import ActionLike, Observation, Policy, ScriptedPolicy

STOP: dict[str, Any] = {"type": "stop", "sql": None}


class ScriptError(ValueError):
    """A script file is missing or malformed, or has no actions for the task."""


class ReplayPolicy(ScriptedPolicy):
    """Plays ``task.gold_actions``, then stops (privileged)."""

    name = "replay"

    def plan(self, task: Task) -> Sequence[ActionLike]:
        steps: list[ActionLike] = [{"type": "execute", "sql": sql} for sql in task.gold_actions]
        final = task.gold_sql if (not task.writable and task.gold_sql) else None
        steps.append({"type": "stop", "sql": final})
        return steps


def load_script(path: str | Path) -> dict[str, list[ActionLike]]:
    """Read and check a script file (see the module docstring)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ScriptError(f"script file {p} does not exist")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ScriptError(f"cannot read script file {p}: {e}") from None
    except json.JSONDecodeError as e:
        raise ScriptError(
            f"script file {p} is not valid JSON ({e.msg} at line {e.lineno})"
        ) from None
    if not isinstance(data, Mapping):
        raise ScriptError(
            f"script file {p} must hold a JSON object mapping task ids to action lists"
        )
    out: dict[str, list[ActionLike]] = {}
    for tid, actions in data.items():
        if not isinstance(actions, list):
            raise ScriptError(f"script file {p}: task {tid!r}: expected a list of actions")
        for i, a in enumerate(actions):
            if not isinstance(a, (dict, str)):
                raise ScriptError(
                    f"script file {p}: task {tid!r}: action {i} must be an object or tool-call text"
                )
            try:
                parse_action(a)
            except ActionError as e:
                raise ScriptError(f"script file {p}: task {tid!r}: action {i}: {e}") from None
        out[str(tid)] = list(actions)
    return out


class ScriptPolicy(Policy):
    """Plays the actions a JSON script gives for each task, then stops."""

    name = "script"

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self.script = load_script(self.path)
        self._plan: list[ActionLike] = []

    def reset(
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        tid = task.id if task is not None else info.get("task_id")
        if tid is None:
            raise ScriptError("ScriptPolicy.reset needs info['task_id'] (or the task)")
        if tid not in self.script:
            known = sorted(self.script)
            shown = ", ".join(known[:5]) + (" ..." if len(known) > 5 else "")
            raise ScriptError(
                f"script file {self.path} has no actions for task {tid!r} (it has: {shown})"
            )
        self._plan = list(self.script[tid])

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return self._plan.pop(0) if self._plan else dict(STOP)


__all__ = ["ReplayPolicy", "ScriptError", "ScriptPolicy", "load_script"]
