"""The environment as TRL ``GRPOTrainer(environment_factory=...)`` expects it.

:class:`ClarifySQLToolEnv` wraps one :class:`~clarisql.envs.env.ClarifySQLEnv` (the Gymnasium env:
no second implementation of episode logic). TRL makes one instance per rollout and

- calls ``reset(**row)`` with the dataset row (``task_id`` selects the task; ``seed`` is optional):
  it returns the user's opening message, which TRL appends to the prompt's last user message;
- exposes the public methods ``ask_user``, ``execute_sql``, ``abstain`` and ``stop`` (inherited
  from :class:`clarisql.policies.hf.ActionTools`, typed and documented) as tools: each one is one
  ``env.step`` and returns the observation text;
- calls ``get_reward()`` once the rollout is over: the episode reward under the env's reward spec
  (sum of the step rewards, episode components included).

A rollout may end without a terminal action (the model ends its turn without a tool call, writes a
malformed call, or runs out of completion tokens). ``get_reward`` then closes the episode the way
the env scores such a turn in evaluation: the turn is sent to ``env.step`` as an action-less text
(an invalid action, with the reward spec's penalty), then the env's own ``stop`` without SQL ends
the episode (the answer is the last successful query's result); it is counted in
:attr:`unfinished`. Calls after the end return a short
notice instead of stepping the env again. Reward components, correctness, turns and clarifications
are kept per episode for logging (:func:`episode_stats_reward` logs them through TRL).

Only ``reset``, ``get_reward`` and the four tools are public methods: TRL turns every other public
method into a tool, so everything else here is private or a property.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suites import Suite
from clarisql.policies.hf import ActionTools

EPISODE_OVER = "The episode is over. End your turn without a tool call."
TURN_LIMIT = "The episode is over: the turn limit is reached."
NO_ACTION = "(the turn ended without a tool call)"


class ClarifySQLToolEnv(ActionTools):
    """One ClarifySQLEnv episode at a time, driven through tool calls (see the module docstring).

    Args:
        suite: suite name, task file or :class:`Suite` (pass a loaded Suite to share it).
        reward: reward spec (preset name, YAML path, mapping); ``None``: the env default.
        env_kwargs: further :class:`ClarifySQLEnv` keyword arguments (``max_turns``, ...).
    """

    def __init__(
        self,
        suite: str | Suite = "builtin",
        *,
        reward: Any = None,
        env_kwargs: Mapping[str, Any] | None = None,
    ):
        self._env = ClarifySQLEnv(suite, reward=reward, **dict(env_kwargs or {}))
        self._clear()

    def _clear(self) -> None:
        self._done = True
        self._started = False
        self._total = 0.0
        self._components: dict[str, float] = {}
        self._episode: dict[str, Any] | None = None
        self._unfinished = False
        self._turns = 0
        self._clarifications = 0
        self._task_id: str | None = None

    # --- TRL interface ----------------------------------------------------------------------
    def reset(self, task_id: str | None = None, seed: int | None = None, **kwargs: Any) -> str:
        """Start an episode on ``task_id`` (a seeded random task if ``None``); return the opening message.

        A task with earlier dialogue turns (``Task.context``, e.g. CoSQL) returns the whole
        dialogue so far: TRL appends this text to the prompt's user message, the only place
        its ``environment_factory`` offers (the env itself keeps the turns as messages)."""
        self._clear()
        options = {"task_id": task_id} if task_id is not None else None
        obs, info = self._env.reset(seed=seed, options=options)
        self._done = False
        self._started = True
        self._task_id = info["task_id"]
        task = self._env.task
        if task is not None and task.context:
            return obs["dialogue"].rstrip("\n")
        return obs["last"]

    def get_reward(self) -> float:
        """The episode reward (closing an unfinished episode first, see the module docstring)."""
        self._finish()
        return float(self._total)

    # --- internals --------------------------------------------------------------------------
    def _act(self, action: dict[str, Any]) -> str:
        if not self._started:
            return "No episode is running."
        if self._done:
            return EPISODE_OVER
        obs, reward, terminated, truncated, info = self._env.step(action)
        self._turns += 1
        if (info.get("action") or {}).get("type") == "clarify" and not info.get("error"):
            self._clarifications += 1
        self._total += float(reward)
        for k, v in (info.get("reward_components") or {}).items():
            self._components[k] = self._components.get(k, 0.0) + float(v)
        text = obs["last"]
        if terminated or truncated:
            self._done = True
            self._episode = info.get("episode")
            if truncated:
                text = f"{text}\n{TURN_LIMIT}"
        return text

    def _finish(self) -> None:
        if self._started and not self._done:
            self._unfinished = True
            # Ending the turn without a usable tool call is an invalid action in the env's terms
            # (as when ``hf:`` sends such text to env.step); then the env's stop closes the episode.
            self._act(NO_ACTION)
            if not self._done:
                self._act({"type": "stop", "sql": None})

    @property
    def env(self) -> ClarifySQLEnv:
        return self._env

    @property
    def episode(self) -> dict[str, Any] | None:
        """The env's end-of-episode summary (``info["episode"]``), once finished."""
        return self._episode

    @property
    def reward_components(self) -> dict[str, float]:
        return dict(self._components)

    @property
    def correct(self) -> bool:
        return bool(self._episode and self._episode.get("correct"))

    @property
    def unfinished(self) -> bool:
        return self._unfinished

    @property
    def stats(self) -> dict[str, float]:
        """Per-episode numbers for logging."""
        return {
            "reward": self._total,
            "correct": float(self.correct),
            "unfinished": float(self._unfinished),
            "turns": float(self._turns),
            "clarifications": float(self._clarifications),
            **{f"component/{k}": v for k, v in self._components.items()},
        }


def episode_stats_reward(
    environments: list[ClarifySQLToolEnv] | None = None, log_metric: Any = None, **kwargs: Any
) -> list[float | None]:
    """A TRL reward function used with weight 0: logs the episodes' stats and returns correctness.

    TRL logs it as ``rewards/episode_stats_reward/mean`` (share of correct episodes); through
    ``log_metric`` it logs ``clarisql/<stat>`` means (reward components, turns, clarifications,
    unfinished episodes). It closes unfinished episodes first, like ``get_reward``.
    """
    if not environments:
        return [None] * len(kwargs.get("prompts", []) or [])
    for e in environments:
        e._finish()
    stats = [e.stats for e in environments]
    if log_metric is not None:
        keys = sorted({k for s in stats for k in s})
        for k in keys:
            log_metric(f"clarisql/{k}", sum(s.get(k, 0.0) for s in stats) / len(stats))
    return [s["correct"] for s in stats]


__all__ = ["EPISODE_OVER", "ClarifySQLToolEnv", "episode_stats_reward"]
