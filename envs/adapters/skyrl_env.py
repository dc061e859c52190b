"""clarisql as a SkyRL-gym environment: :class:`ClarisqlSkyRLEnv` (a ``BaseTextEnv``).

SkyRL makes one environment per trajectory, ``ClarisqlSkyRLEnv(env_config, extras)``:

- ``env_config`` (SkyRL's ``environment.skyrl_gym.clarisql`` block): ``suite``, ``gate``,
  ``reward``, ``suite_kwargs``, ``env_kwargs`` (see :class:`~clarisql.envs.adapters.episode.EnvSpec`).
- ``extras`` (the dataset row's columns, as SkyRL passes them): ``task_id`` (or
  ``reward_spec.ground_truth.task_id``), optional ``seed``; the datasets export's rows carry
  both (``clarisql export SUITE --format hf``).

``init(prompt)`` resets the episode and returns the env's own opening chat (system prompt with
the action format and schema, the user's opening), whatever the row's ``prompt`` held: the
agent sees exactly what the in-process env shows. ``step(action)`` takes the model's reply
(tool-call text) and returns the environment's answer as one message, the step reward (the
env's reward spec; the episode's sum is its reward), ``done`` and metadata (the action, the
error, and at the end the episode's reward components and ``correct``). ``get_metrics()``
reports the episode's components, ``correct`` and turns, averaged by SkyRL over episodes.

Like SkyRL's own ``text2sql`` env, the episode ends at ``max_turns`` (the env's, else the
row's ``max_turns``) and an action with nothing usable is answered, not raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from clarisql.envs.adapters.episode import EnvSpec, TextEpisode

ENV_ID = "clarisql"


def _mapping(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return {k: obj[k] for k in obj}
    try:  # an OmegaConf DictConfig or a dataclass config
        from omegaconf import OmegaConf

        return dict(OmegaConf.to_container(OmegaConf.create(obj), resolve=True))
    except Exception:
        return dict(vars(obj))


def _task_id(extras: Mapping[str, Any]) -> str:
    if extras.get("task_id") is not None:
        return str(extras["task_id"])
    spec = extras.get("reward_spec") or {}
    truth = spec.get("ground_truth") if isinstance(spec, Mapping) else None
    if isinstance(truth, Mapping) and truth.get("task_id") is not None:
        return str(truth["task_id"])
    raise ValueError(
        "a clarisql SkyRL row needs extras['task_id'] (or reward_spec.ground_truth.task_id): "
        "export the suite with `clarisql export SUITE --format hf`"
    )


class ClarisqlSkyRLEnv(BaseTextEnv):
    """One clarisql episode in SkyRL-gym (see the module docstring)."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        self.task_id = _task_id(extras)
        self.seed = int(extras["seed"]) if extras.get("seed") is not None else 0
        cfg = _mapping(env_config)
        spec = EnvSpec.from_mapping(
            {k: v for k, v in cfg.items() if k in EnvSpec.__dataclass_fields__}
        )
        if "max_turns" in extras and "max_turns" not in spec.env_kwargs:
            spec.env_kwargs["max_turns"] = int(extras["max_turns"])
        self.episode = TextEpisode(spec)
        self.episode.env.suite.task(self.task_id)  # an unknown id fails here, not mid-training
        self.max_turns = self.episode.env.max_turns
        self.chat_history: list[dict[str, Any]] = []

    def init(self, prompt: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        messages = self.episode.start(self.task_id, seed=self.seed)
        self.turns = 0
        self.chat_history = list(messages)
        return messages, {"task_id": self.task_id, "tools": self.episode.tools}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        self.chat_history.append({"role": "assistant", "content": action})
        turn = self.episode.act(action)
        self.chat_history.append(turn.message)
        meta: dict[str, Any] = {
            "task_id": self.task_id,
            "action": turn.info.get("action"),
            "error": turn.info.get("error"),
        }
        if turn.done:
            meta["reward_components"] = self.episode.components()
            meta["correct"] = self.episode.correct()
            meta["episode_reward"] = self.episode.total
        return BaseTextEnvStepOutput(
            observations=[] if turn.done else [turn.message],
            reward=turn.reward,
            done=turn.done,
            metadata=meta,
        )

    def get_metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {f"reward/{k}": v for k, v in self.episode.components().items()}
        out["correct"] = float(self.episode.correct())
        out["turns"] = self.turns
        return out

    def close(self) -> None:
        self.episode.close()


def register(env_id: str = ENV_ID) -> str:
    """Register :class:`ClarisqlSkyRLEnv` with SkyRL-gym as ``env_id`` (once); the id."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        skyrl_register(id=env_id, entry_point="clarisql.envs.adapters.skyrl_env:ClarisqlSkyRLEnv")
    return env_id
