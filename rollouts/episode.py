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
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

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

    Calls :meth:`Policy.seed` (a no-op for deterministic policies).
    """
    if seed is not None:
        policy.seed(seed)


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


class EpisodeStepper:
    """One episode driven from outside: :meth:`start`, then :meth:`step` with each action.

    :func:`run_episode` and :func:`run_episode_batch` are built on it; it records every turn
    the same way for both.
    """

    def __init__(
        self,
        env: ClarifySQLEnv,
        task_id: str,
        seed: int | None = None,
        trial: int = 0,
        policy_seed: int | None = None,
        env_lock: AbstractContextManager[Any] | None = None,
    ):
        self._env_lock = env_lock if env_lock is not None else nullcontext()
        self.env, self.task_id, self.seed, self.trial, self.policy_seed = (
            env,
            task_id,
            seed,
            trial,
            policy_seed,
        )
        self.turns: list[dict[str, Any]] = []
        self.total = 0.0
        self.policy_s = 0.0
        self.done = False
        self.obs: dict[str, Any] = {}
        self.info: dict[str, Any] = {}

    def start(self, policy: Policy, *, reseed: bool = True) -> None:
        """Reset the env on the task and the policy on the opening observation."""
        self.t0 = time.perf_counter()
        if reseed:
            seed_policy(policy, self.policy_seed)
        with self._env_lock:
            self.obs, self.info = self.env.reset(seed=self.seed, options={"task_id": self.task_id})
        self.task = self.env.task
        assert self.task is not None
        self.opening = self.obs["last"]
        tp = time.perf_counter()
        policy.reset(self.obs, self.info, self.task if policy.privileged else None)
        self.policy_s += time.perf_counter() - tp

    def step(self, action: Any, policy_s: float = 0.0) -> bool:
        """Apply the policy's action (which took ``policy_s`` seconds); True when the episode ended."""
        self.policy_s += policy_s
        with self._env_lock:
            obs, reward, terminated, truncated, info = self.env.step(action)
        self.total += reward
        parsed = info.get("action")
        self.turns.append(
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
        self.obs, self.info = obs, info
        self.done = bool(terminated or truncated)
        return self.done

    def result(self) -> EpisodeResult:
        summary = self.info.get("episode") or {}
        return EpisodeResult(
            self.task_id,
            self.task.category,
            self.total,
            bool(summary.get("correct")),
            summary,
            self.turns,
            self.seed,
            self.trial,
            time.perf_counter() - self.t0,
            self.policy_s,
            opening=self.opening,
            final_sql=final_sql_of(self.turns),
            policy_seed=self.policy_seed,
            gold=gold_view(self.task),
        )


def run_episode(
    env: ClarifySQLEnv,
    policy: Policy,
    task_id: str,
    seed: int | None = None,
    trial: int = 0,
    policy_seed: int | None = None,
    env_lock: AbstractContextManager[Any] | None = None,
) -> EpisodeResult:
    """Reset ``env`` on ``task_id``, let ``policy`` act until the episode ends, return the result.

    ``seed`` seeds the env (and through it the user simulator); ``policy_seed``, when given,
    re-seeds the policy first (:func:`seed_policy`). ``env_lock``, when given, is held around
    every ``env.reset``/``env.step`` (not around the policy), for threads sharing a process.
    """
    ep = EpisodeStepper(env, task_id, seed, trial, policy_seed, env_lock)
    ep.start(policy)
    while True:
        tp = time.perf_counter()
        action = policy.act(ep.obs, ep.info)
        if ep.step(action, time.perf_counter() - tp):
            return ep.result()


def batch_info(env: ClarifySQLEnv, info: dict[str, Any]) -> dict[str, Any]:
    """``info`` plus the episode's chat so far (``messages``), which step infos do not carry."""
    return {**info, "messages": env.messages}


def run_episode_batch(
    envs: Sequence[ClarifySQLEnv],
    policy: Policy,
    episodes: Iterable[tuple[str, int | None, int, int | None]],
    on_result: Callable[[EpisodeResult | tuple[tuple[str, int], BaseException]], None],
) -> None:
    """Run episodes in lockstep on ``len(envs)`` environments with one batched policy.

    ``episodes`` yields ``(task_id, seed, trial, policy_seed)``; each free env takes the next
    one as soon as its episode ends (continuous batching). Every round calls
    ``policy.act_batch`` once for all running episodes, each ``info`` carrying that episode's
    ``messages`` (:func:`batch_info`), as the policy contract for ``act_batch`` (independent
    episodes) requires. The policy is not re-seeded per episode (one generator serves the whole
    batch), so sampled runs are reproducible only as a whole. ``on_result`` gets each finished
    :class:`EpisodeResult`, or ``((task_id, trial), exception)`` for the episodes running when
    the policy raised (they are dropped; the others go on).
    """
    queue = iter(episodes)
    slots: list[EpisodeStepper | None] = [None] * len(envs)
    exhausted = False
    while True:
        for i, env in enumerate(envs):
            while slots[i] is None and not exhausted:
                nxt = next(queue, None)
                if nxt is None:
                    exhausted = True
                    break
                tid, seed, trial, pseed = nxt
                ep = EpisodeStepper(env, tid, seed, trial, pseed)
                try:
                    ep.start(policy, reseed=False)
                    slots[i] = ep
                except Exception as e:  # reported per episode, like a policy failure
                    on_result(((tid, trial), e))
        active = [(i, ep) for i, ep in enumerate(slots) if ep is not None]
        if not active:
            return
        tp = time.perf_counter()
        try:
            actions = policy.act_batch(
                [ep.obs for _, ep in active], [batch_info(envs[i], ep.info) for i, ep in active]
            )
            if len(actions) != len(active):
                raise RuntimeError(
                    f"act_batch returned {len(actions)} actions for {len(active)} episodes"
                )
        except Exception as e:
            for i, ep in active:
                on_result(((ep.task_id, ep.trial), e))
                slots[i] = None
            continue
        share = (time.perf_counter() - tp) / len(active)
        for (i, ep), action in zip(active, actions):
            if ep.step(action, share):
                slots[i] = None
                on_result(ep.result())
