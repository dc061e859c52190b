"""Python clients: OpenEnv's WebSocket client typed for clarisql, and a Gymnasium-shaped wrapper.

``ClarisqlEnvClient`` is an ``openenv.core.EnvClient`` (async; ``.sync()`` for blocking use),
for trainers that speak OpenEnv (TRL's OpenEnv integration and others).
``RemoteClarifySQLEnv`` returns exactly what ``ClarifySQLEnv`` returns in-process:
``reset() -> (obs, info)`` and ``step(a) -> (obs, reward, terminated, truncated, info)``.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from clarisql.envs.server.models import ClarisqlAction, ClarisqlObservation, ClarisqlState


class ClarisqlEnvClient(EnvClient[ClarisqlAction, ClarisqlObservation, ClarisqlState]):
    """OpenEnv client for a ``clarisql serve`` server (one WebSocket = one session).

    Observations come back with the whole dialogue: the server sends a step's dialogue as what
    it added (``dialogue_start``), and this client appends it to the one it holds.
    """

    _dialogue = ""

    def _step_payload(self, action: ClarisqlAction | dict | str) -> dict[str, Any]:
        if isinstance(action, ClarisqlAction):
            return action.model_dump(exclude_none=True, exclude={"metadata"})
        if isinstance(action, str):
            return {"text": action}
        return dict(action)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ClarisqlObservation]:
        fields = dict(payload.get("observation", {}))
        start = int(fields.pop("dialogue_start", 0) or 0)
        if start:
            if start != len(self._dialogue):
                raise ValueError(
                    f"dialogue out of step: the server continues at character {start}, "
                    f"this client holds {len(self._dialogue)}"
                )
            fields["dialogue"] = self._dialogue + fields.get("dialogue", "")
        self._dialogue = fields.get("dialogue", "")
        obs = ClarisqlObservation(
            **fields,
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )
        return StepResult(observation=obs, reward=obs.reward, done=obs.done)

    def _parse_state(self, payload: dict[str, Any]) -> ClarisqlState:
        return ClarisqlState(**payload)


class RemoteClarifySQLEnv:
    """A served environment with ``ClarifySQLEnv``'s own method shapes (blocking).

    ``RemoteClarifySQLEnv("http://127.0.0.1:8000")``; ``reset(seed=..., options={"task_id":
    ...})``; ``step(action)`` with a dict action or tool-call text; ``close()``.
    """

    def __init__(self, base_url: str, **client_kwargs: Any):
        self._client = ClarisqlEnvClient(base_url, **client_kwargs).sync()
        self._client.connect()
        self._schema = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        data: dict[str, Any] = {}
        if seed is not None:
            data["seed"] = seed
        for key in ("task_id", "task_index"):
            if options and key in options:
                data[key] = options[key]
        res = self._client.reset(**data)
        self._schema = res.observation.db_schema
        return self._gym_obs(res.observation), res.observation.info

    def step(self, action: dict[str, Any] | str) -> tuple[dict, float, bool, bool, dict]:
        res = self._client.step(action)
        o = res.observation
        truncated = bool(o.truncated)
        return (
            self._gym_obs(o),
            float(res.reward or 0.0),
            bool(res.done) and not truncated,
            truncated,
            o.info,
        )

    def _gym_obs(self, o: ClarisqlObservation) -> dict[str, Any]:
        schema = o.db_schema or self._schema  # steps leave the episode's schema out
        return {"schema": schema, "dialogue": o.dialogue, "last": o.last, "turn": o.turn}

    def state(self) -> ClarisqlState:
        return self._client.state()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RemoteClarifySQLEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
