"""clarisql as a verl multi-turn interaction: :class:`ClarisqlInteraction`.

verl's SGLang multi-turn rollout calls an *interaction* after every assistant turn
(``actor_rollout_ref.rollout.multi_turn.interaction_config_path``): the interaction answers as
the user, scores the turn and says when the conversation ends. Here the assistant's turn is the
action (its tool-call text, or its first ``tool_calls`` item), the answer is the env's
observation (a SQL result, the user's clarification, an invalid-action note), the turn score is
the env's step reward and the conversation ends when the episode does.

verl's interface (``verl.interactions.base.BaseInteraction``; one object serves many
trajectories, each an ``instance_id``):

- ``start_interaction(instance_id=None, task_id=..., seed=0, **kwargs) -> instance_id``: the
  row's ``extra_info.interaction_kwargs`` (``{"name": "clarisql", "task_id": ..., "seed": ...}``;
  the datasets export writes them) start that task's episode.
- ``generate_response(instance_id, messages) -> (should_terminate, response, turn_score,
  metadata)``; ``calculate_score(instance_id) -> float`` (the episode reward so far);
  ``finalize_interaction(instance_id)`` releases the episode.

The row's ``prompt`` must be the env's opening chat (the export's ``prompt`` column is).
``config`` (the interaction config's ``config:`` mapping): ``suite``, ``gate``, ``reward``,
``suite_kwargs``, ``env_kwargs`` (see :class:`~clarisql.envs.adapters.episode.EnvSpec`).

verl is not a dependency of this project (it pins its own torch/vLLM/SGLang stack): this module
imports verl only to subclass its base class when verl is installed, and works the same without
it, so the recipe (``configs/verl/``) is checked here without verl.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from clarisql.envs.adapters.episode import EnvSpec, TextEpisode

try:  # verl's base class when verl is installed (the same methods either way)
    from verl.interactions.base import BaseInteraction as _Base
except ImportError:
    _Base = object


def _last_assistant(messages: list[dict[str, Any]]) -> Any:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return message
    return ""


class ClarisqlInteraction(_Base):  # type: ignore[misc,valid-type]
    """clarisql episodes as verl interaction instances (see the module docstring)."""

    def __init__(self, config: dict[str, Any] | None = None):
        config = dict(config or {})
        self.config = config
        self.name: str = config.pop("name", "clarisql")
        self.spec = EnvSpec.from_mapping(config)
        self._episodes: dict[str, TextEpisode] = {}

    async def start_interaction(
        self,
        instance_id: str | None = None,
        task_id: str | None = None,
        seed: int = 0,
        **kwargs: Any,
    ) -> str:
        if task_id is None:
            raise ValueError(
                "clarisql interaction_kwargs need a task_id (export the suite with "
                "`clarisql export SUITE --format hf`)"
            )
        instance_id = instance_id or uuid.uuid4().hex
        episode = await asyncio.to_thread(TextEpisode, self.spec)
        await asyncio.to_thread(episode.start, str(task_id), int(seed))
        self._episodes[instance_id] = episode
        return instance_id

    async def generate_response(
        self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
    ) -> tuple[bool, str, float, dict[str, Any]]:
        episode = self._episodes[instance_id]
        if episode.done:
            return True, "The episode is over.", 0.0, {"task_id": episode.task_id}
        turn = await asyncio.to_thread(episode.act, _last_assistant(messages))
        meta: dict[str, Any] = {
            "task_id": episode.task_id,
            "error": turn.info.get("error"),
            "role": turn.message["role"],
        }
        if turn.done:
            meta["reward_components"] = episode.components()
            meta["correct"] = episode.correct()
        return turn.done, turn.message["content"], turn.reward, meta

    async def calculate_score(self, instance_id: str | None = None, **kwargs: Any) -> float:
        episode = self._episodes.get(instance_id or "")
        return episode.total if episode is not None else 0.0

    async def finalize_interaction(self, instance_id: str | None = None, **kwargs: Any) -> None:
        episode = self._episodes.pop(instance_id or "", None)
        if episode is not None:
            await asyncio.to_thread(episode.close)
