"""The policy interface: given the observation (and the chat messages), return the next action.

A policy is reset at the start of each episode and asked for one action per step. Actions are
structured dicts or canonical tool-call text (see :mod:`clarisql.envs.actions`). Scripted
baselines that need the gold task (oracle, replay, the naive answerer) set ``privileged = True``
and receive the :class:`~clarisql.envs.tasks.Task` in :meth:`Policy.reset`; a learned policy
never sees it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from clarisql.envs.tasks import Task

Observation = dict[str, Any]
ActionLike = dict[str, Any] | str


class Policy(ABC):
    """Base class of every policy."""

    name: str = "policy"
    privileged: bool = False

    def reset(  # noqa: B027
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        """Start an episode (``task`` is given only to privileged policies)."""

    @abstractmethod
    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        """The next action."""

    def seed(self, seed: int) -> None:  # noqa: B027
        """Re-seed the policy's randomness (called per episode by the rollout runner)."""

    def act_batch(
        self, observations: Sequence[Observation], infos: Sequence[dict[str, Any]]
    ) -> list[ActionLike]:
        """Actions for several independent episodes at once (model policies batch generation)."""
        return [self.act(o, i) for o, i in zip(observations, infos)]

    def close(self) -> None:  # noqa: B027
        """Release resources."""


class ScriptedPolicy(Policy):
    """A privileged policy that plays a plan computed from the task at reset, then stops."""

    privileged = True

    def __init__(self) -> None:
        self._plan: list[ActionLike] = []

    def reset(
        self, observation: Observation, info: dict[str, Any], task: Task | None = None
    ) -> None:
        if task is None:
            raise ValueError(f"policy {self.name!r} is privileged: reset() needs the task")
        self._plan = list(self.plan(task))

    def plan(self, task: Task) -> Sequence[ActionLike]:
        raise NotImplementedError

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return self._plan.pop(0) if self._plan else {"type": "stop", "sql": None}
