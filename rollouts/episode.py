"""Run one episode of a policy in an environment (the building block of every rollout).

:func:`run_episode` resets the env on one task, lets the policy act until the episode ends and
returns an :class:`EpisodeResult`; :meth:`EpisodeResult.to_dict` is the trajectory line the
rollout runner streams to ``trajectories.jsonl`` (see :mod:`clarisql.rollouts.runner`).

Exceptions raised by the policy (an unreachable endpoint, a model error) propagate to the
caller; the environment itself never raises from ``step``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.tasks import Task
from clarisql.policies.base import Policy

#: Version of the trajectory line format written by :meth:`EpisodeResult.to_dict`.
TRAJECTORY_VERSION = 1

# The env formats a statement that returned columns as "OK: <n> row(s)[ (truncated ...)]." on the
# first line (writes say "row(s) changed", other statements just "OK."); such a result is what
# a bare ``stop`` answers with.
_ROWS_HEAD = re.compile(r"^OK: \d+ row\(s\)(?: \(truncated[^)]*\))?\.$")


@dataclass
class EpisodeResult:
    """One finished episode: the env's end-of-episode summary plus every turn.

    ``turns[i]`` holds ``action`` (the parsed action dict, or the raw action when it did not
    parse), ``raw`` (the policy's text when it answered with text), ``observation`` (what the
    action produced), ``reward``, ``reward_components`` and ``error``.
    """

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
    opening: str = ""
    final_sql: str | None = None
    policy_seed: int | None = None
    gold: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        record = self.summary.get("record") or {}
        return {
            "v": TRAJECTORY_VERSION,
            "task_id": self.task_id,
            "trial": self.trial,
            "seed": self.seed,
            "policy_seed": self.policy_seed,
            "category": self.category,
            "reward": self.reward,
            "correct": self.correct,
            "end": record.get("end"),
            "opening": self.opening,
            "final_sql": self.final_sql,
            "gold": self.gold,
            "summary": self.summary,
            "turns": self.turns,
            "timings": {
                "episode_s": self.elapsed_s,
                "policy_s": self.policy_s,
                "env_s": max(0.0, self.elapsed_s - self.policy_s),
            },
        }


def gold_view(task: Task) -> dict[str, Any]:
    """What the metrics need from the gold task, stored with every trajectory line."""
    return {
        "answerable": task.answerable,
        "unanswerable_kind": task.unanswerable_kind,
        "writable": task.writable,
        "labels": [u.label.to_json() for u in task.underspecs],
        "gold_sql": task.gold_sql,
        "gold_actions": list(task.gold_actions),
    }


def seed_policy(policy: Policy, seed: int | None) -> None:
    """Seed a policy for one episode, so that results do not depend on which worker ran it.

    A policy with a ``seed(int)`` method gets it called; a policy holding a numpy ``rng``
    (``random``) gets a fresh generator. Other policies are left alone.
    """
    if seed is None:
        return
    hook = getattr(policy, "seed", None)
    if callable(hook):
        hook(seed)
    elif isinstance(getattr(policy, "rng", None), np.random.Generator):
        policy.rng = np.random.default_rng(seed)  # type: ignore[attr-defined]


def final_sql_of(turns: list[dict[str, Any]]) -> str | None:
    """The SQL whose result is the episode's answer, read from trajectory turns.

    The ``sql`` of a final ``stop`` when given; else the last ``execute`` that succeeded and
    returned columns (the env answers a bare ``stop`` with that result); else ``None``.
    """
    last_rows: str | None = None
    for t in turns:
        act = t.get("action")
        if not isinstance(act, dict):
            continue
        if act.get("type") == "execute" and t.get("error") is None:
            head = str(t.get("observation", "")).split("\n", 1)[0]
            if _ROWS_HEAD.match(head) and isinstance(act.get("sql"), str):
                last_rows = act["sql"]
        elif act.get("type") == "stop":
            sql = act.get("sql")
            return sql if isinstance(sql, str) and sql.strip() else last_rows
    return last_rows


def run_episode(
    env: ClarifySQLEnv,
    policy: Policy,
    task_id: str,
    seed: int | None = None,
    trial: int = 0,
    policy_seed: int | None = None,
) -> EpisodeResult:
    """Reset ``env`` on ``task_id``, let ``policy`` act until the episode ends, return the result.

    ``seed`` seeds the env (and through it the user simulator); ``policy_seed``, when given,
    re-seeds the policy first (:func:`seed_policy`).
    """
    t0 = time.perf_counter()
    seed_policy(policy, policy_seed)
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    task = env.task
    assert task is not None
    opening = obs["last"]
    tp = time.perf_counter()
    policy.reset(obs, info, task if policy.privileged else None)
    policy_s = time.perf_counter() - tp
    turns: list[dict[str, Any]] = []
    total = 0.0
    while True:
        tp = time.perf_counter()
        action = policy.act(obs, info)
        policy_s += time.perf_counter() - tp
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        parsed = info.get("action")
        turns.append(
            {
                "action": parsed
                if parsed is not None
                else (action if isinstance(action, (str, dict)) else repr(action)),
                "raw": action if isinstance(action, str) else None,
                "observation": obs["last"],
                "reward": reward,
                "reward_components": info.get("reward_components", {}),
                "error": info.get("error"),
            }
        )
        if terminated or truncated:
            break
    summary = info.get("episode") or {}
    return EpisodeResult(
        task_id,
        task.category,
        total,
        bool(summary.get("correct")),
        summary,
        turns,
        seed,
        trial,
        time.perf_counter() - t0,
        policy_s,
        opening=opening,
        final_sql=final_sql_of(turns),
        policy_seed=policy_seed,
        gold=gold_view(task),
    )
