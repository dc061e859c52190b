"""Run one episode of a policy in an environment (the building block of every rollout)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies.base import Policy


@dataclass
class EpisodeResult:
    """One finished episode: the env's end-of-episode summary plus every turn."""

    task_id: str
    category: str
    reward: float
    correct: bool
    summary: dict[str, Any]  # info["episode"] of the last step (record, totals, ...)
    turns: list[dict[str, Any]] = field(default_factory=list)
    seed: int | None = None
    trial: int = 0
    elapsed_s: float = 0.0
    policy_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id, "trial": self.trial, "seed": self.seed, "category": self.category,
            "reward": self.reward, "correct": self.correct, "summary": self.summary, "turns": self.turns,
            "timings": {"episode_s": self.elapsed_s, "policy_s": self.policy_s},
        }


def run_episode(env: ClarifySQLEnv, policy: Policy, task_id: str, seed: int | None = None, trial: int = 0) -> EpisodeResult:
    """Reset ``env`` on ``task_id``, let ``policy`` act until the episode ends, return the result."""
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    policy.reset(obs, info, env.task if policy.privileged else None)
    turns: list[dict[str, Any]] = []
    total = 0.0
    policy_s = 0.0
    while True:
        tp = time.perf_counter()
        action = policy.act(obs, info)
        policy_s += time.perf_counter() - tp
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        turns.append({
            "action": info.get("action") if info.get("action") is not None else (action if isinstance(action, str) else repr(action)),
            "observation": obs["last"], "reward": reward,
            "reward_components": info.get("reward_components", {}), "error": info.get("error"),
        })
        if terminated or truncated:
            break
    summary = info.get("episode") or {}
    return EpisodeResult(task_id, env.task.category if env.task else "", total, bool(summary.get("correct")),
                         summary, turns, seed, trial, time.perf_counter() - t0, policy_s)
