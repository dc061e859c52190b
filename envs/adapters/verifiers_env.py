"""clarisql as a verifiers (``verifiers.v1``, 0.4) environment: ``load_environment(...)``.

``load_environment(suite="builtin", gate=None, reward=None, split=None, ...)`` returns a
``verifiers.v1`` ``Env``; the module is also a verifiers taskset plugin, so verifiers' own
entry points load it by id (``--env.taskset.id clarisql-vf``, the top-level module ``clarisql_vf``;
``--env.taskset.suite``, ``.gate``, ``.reward``, ``.split``).

- **Taskset** (:class:`ClarisqlTaskset`): one task per suite task (in the stable-hash
  ``split`` when given): ``id``/``name`` the task id, ``system_prompt`` the env's system
  prompt (action format and schema), ``prompt`` the user's opening message, exactly as
  ``ClarifySQLEnv.reset(seed=seed, options={"task_id": id})`` shows them.
- **Multi-turn tool episode** (:class:`ClarisqlEnv`): as verifiers' own TextArena and OpenEnv
  tasksets do, the environment plays the run's user: each model turn's reply is the action (its
  first ``tool_calls`` item, or its tool-call text), the env's answer (the SQL result, the
  user's clarification, an invalid-action note) is the next user turn, and ``abstain``/``stop``,
  the user's ``###STOP###`` or the env's ``max_turns`` end the exchange.
- **Rubric** = the reward spec: each weighted component of the finished episode (``outcome``,
  ``reliability``, the step penalties, ...) is one named reward on the trace (weight 1: the
  spec's weights are already in), so verifiers' total is the episode reward;
  ``correct``, ``turns`` and ``clarifications`` are metrics. An exchange the agent's own limits
  cut short is scored as ``truncated`` by the env's rules (it is finished as truncated).

Needs the ``verifiers`` extra. The agent's harness defaults to verifiers' ``null`` harness (a
chat program with no tools of its own) in a local subprocess runtime.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import Field

from clarisql.envs.adapters.episode import EnvSpec, TextEpisode

#: the plugin id verifiers resolves to the top-level module ``clarisql_vf`` (this module re-exported)
TASKSET_ID = "clarisql-vf"
DEFAULT_HARNESS = "null"


class ClarisqlTasksetConfig(vf.TasksetConfig):
    """What the episodes are made of (see :class:`~clarisql.envs.adapters.episode.EnvSpec`)."""

    suite: str = "builtin"
    gate: Literal["labels", "text", "both"] | None = None
    reward: str | dict[str, Any] | None = None
    suite_kwargs: dict[str, Any] = Field(default_factory=dict)
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    split: Literal["all", "train", "test"] = "all"
    test_fraction: float = 0.2
    seed: int = 0
    """The seed of every episode's reset (the user simulator's draws)."""

    def env_spec(self) -> EnvSpec:
        return EnvSpec(
            suite=self.suite,
            gate=self.gate,
            reward=self.reward,
            suite_kwargs=dict(self.suite_kwargs),
            env_kwargs=dict(self.env_kwargs),
            split=self.split,
            test_fraction=self.test_fraction,
        )


class ClarisqlData(vf.TaskData):
    info: dict[str, Any]
    """``task_id`` and the reset ``seed``: what the env replays the episode from."""


class ClarisqlTask(vf.Task[ClarisqlData, vf.State, vf.TaskConfig]):
    pass


class ClarisqlTaskset(vf.Taskset[ClarisqlTask, ClarisqlTasksetConfig]):
    """The suite's tasks (see the module docstring)."""

    def load(self) -> Iterator[ClarisqlTask]:
        spec = self.config.env_spec()
        episode = TextEpisode(spec)
        try:
            for task_id in spec.task_ids():
                system, opening = episode.start(task_id, seed=self.config.seed)[:2]
                yield ClarisqlTask(
                    ClarisqlData(
                        id=task_id,
                        name=task_id,
                        system_prompt=system["content"],
                        prompt=opening["content"],
                        info={"task_id": task_id, "seed": self.config.seed},
                    ),
                    self.config.task,
                )
        finally:
            episode.close()


class ClarisqlEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(
        harness={"id": DEFAULT_HARNESS}, runtime=vf.SubprocessConfig()
    )


def _reply(segment: Any) -> Any:
    """The last assistant message of a segment, as a dict (tool calls kept)."""
    for message in reversed(segment.messages or []):
        if isinstance(message, vf.AssistantMessage):
            return message.model_dump()
    return segment.last_reply


class ClarisqlEnv(vf.Env[ClarisqlEnvConfig]):
    """Steps one clarisql episode as the run's user (see the module docstring)."""

    async def run(self, task: ClarisqlTask, agents: Any) -> None:
        spec = self.taskset.config.env_spec()
        info = task.data.info
        episode = await asyncio.to_thread(TextEpisode, spec)
        try:
            messages = await asyncio.to_thread(episode.start, info["task_id"], info["seed"])
            if messages[1]["content"] != task.data.prompt_text:
                raise vf.TaskError(
                    f"task {info['task_id']}: the env's opening differs from the task prompt "
                    "(the suite changed since the taskset was loaded)"
                )
            turns = 0
            async with agents.agent.interaction(task) as interaction:
                segment = await interaction.turn()
                while not segment.terminated:
                    turn = await asyncio.to_thread(episode.act, _reply(segment))
                    turns += 1
                    if turn.done:
                        break
                    segment = await interaction.turn(turn.message["content"])
            if not episode.done:  # the agent's own limits ended the exchange first
                await asyncio.to_thread(_truncate, episode)
            trace = interaction.trace
            for name, value in sorted(episode.components().items()):
                trace.record_reward(name, value, 1.0)
            if not episode.components():
                trace.record_reward("outcome", 0.0, 1.0)
            trace.record_metric("correct", float(episode.correct()))
            trace.record_metric("turns", float(turns))
            record = (episode.episode or {}).get("record") or {}
            trace.record_metric(
                "clarifications",
                float(sum(1 for t in record.get("turns", []) if t.get("kind") == "clarify")),
            )
            trace.info["task_id"] = info["task_id"]
            trace.info["end"] = record.get("end")
        finally:
            episode.close()


def _truncate(episode: TextEpisode) -> None:
    """Finish an episode the agent stopped answering: invalid actions up to the env's
    ``max_turns`` (each scored by the spec as any invalid action), so it ends truncated."""
    for _ in range(episode.env.max_turns + 1):
        if episode.done:
            return
        episode.act(" ")


def load_environment(
    suite: str = "builtin",
    gate: str | None = None,
    reward: str | dict[str, Any] | None = None,
    *,
    split: str = "all",
    seed: int = 0,
    suite_kwargs: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    agent: dict[str, Any] | None = None,
) -> ClarisqlEnv:
    """The verifiers environment of ``suite`` (module docstring); ``agent``: verifiers
    ``AgentConfig`` fields (``harness``, ``runtime``, ``max_turns``, ...) over the defaults."""
    taskset: dict[str, Any] = {
        "id": TASKSET_ID,
        "suite": suite,
        "gate": gate,
        "reward": reward,
        "split": split,
        "seed": seed,
        "suite_kwargs": dict(suite_kwargs or {}),
        "env_kwargs": dict(env_kwargs or {}),
    }
    data: dict[str, Any] = {"taskset": taskset}
    if agent:
        data["agent"] = dict(agent)
    config = vf.resolve_env_config(data)
    return vf.load_environment(config)


__all__ = [
    "ClarisqlData",
    "ClarisqlEnv",
    "ClarisqlEnvConfig",
    "ClarisqlTask",
    "ClarisqlTaskset",
    "ClarisqlTasksetConfig",
    "load_environment",
]
