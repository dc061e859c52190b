"""Python clients: a Gymnasium-shaped wrapper and OpenEnv's WebSocket client typed for clarisql.

``RemoteClarifySQLEnv`` returns exactly what ``ClarifySQLEnv`` returns in-process:
``reset() -> (obs, info)`` and ``step(a) -> (obs, reward, terminated, truncated, info)``. It
speaks OpenEnv's WebSocket protocol (``/ws``: ``reset``/``step``/``state``/``close`` messages)
with the ``websockets`` package alone, so importing it costs no more than ``websockets``:
openenv-core's package imports its web interface (gradio) on any import, seconds of start-up.

``ClarisqlEnvClient`` is an ``openenv.core.EnvClient`` (async; ``.sync()`` for blocking use),
for trainers that speak OpenEnv (TRL's OpenEnv integration and others); it is made on first
use (``from clarisql.envs.server.client import ClarisqlEnvClient`` imports openenv-core then).

Both ask the server for dialogue deltas (``dialogue_deltas=True`` on reset: the schema with
``reset`` only, a step's dialogue from ``dialogue_start`` on) and rebuild whole observations.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clarisql.envs.server.models import ClarisqlState


class RemoteError(RuntimeError):
    """The server answered a message with an error (its message)."""


def _ws_url(base_url: str) -> str:
    url = base_url.rstrip("/")
    if url.startswith("https://"):
        url = "wss://" + url[len("https://") :]
    elif url.startswith("http://"):
        url = "ws://" + url[len("http://") :]
    elif not url.startswith(("ws://", "wss://")):
        url = "ws://" + url
    return url + "/ws"


class _Dialogue:
    """Rebuilds whole dialogues from the deltas a server sends."""

    def __init__(self) -> None:
        self.text = ""

    def whole(self, fields: dict[str, Any]) -> dict[str, Any]:
        start = int(fields.pop("dialogue_start", 0) or 0)
        if start:
            if start != len(self.text):
                raise ValueError(
                    f"dialogue out of step: the server continues at character {start}, "
                    f"this client holds {len(self.text)}"
                )
            fields["dialogue"] = self.text + fields.get("dialogue", "")
        self.text = fields.get("dialogue", "")
        return fields


class RemoteClarifySQLEnv:
    """A served environment with ``ClarifySQLEnv``'s own method shapes (blocking).

    ``RemoteClarifySQLEnv("http://127.0.0.1:8000")``; ``reset(seed=..., options={"task_id":
    ...})``; ``step(action)`` with a dict action or tool-call text; ``state()``; ``close()``.
    ``connect_timeout_s`` bounds the connection, ``message_timeout_s`` each reply.
    """

    def __init__(
        self,
        base_url: str,
        connect_timeout_s: float = 10.0,
        message_timeout_s: float = 60.0,
        max_message_size_mb: float = 100.0,
    ):
        from websockets.sync.client import connect

        self._timeout = message_timeout_s
        self._stack = contextlib.ExitStack()
        try:
            self._ws = self._stack.enter_context(
                connect(
                    _ws_url(base_url),
                    open_timeout=connect_timeout_s,
                    max_size=int(max_message_size_mb * 1024 * 1024),
                )
            )
        except Exception as e:  # (refused, timed out, bad handshake)
            raise ConnectionError(f"cannot connect to {_ws_url(base_url)}: {e}") from e
        self._schema = ""
        self._dialogue = _Dialogue()

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        self._ws.send(json.dumps(message))
        reply = json.loads(self._ws.recv(timeout=self._timeout))
        if reply.get("type") == "error":
            data = reply.get("data") or {}
            raise RemoteError(str(data.get("message", data)))
        return reply.get("data") or {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        data: dict[str, Any] = {"dialogue_deltas": True}
        if seed is not None:
            data["seed"] = seed
        for key in ("task_id", "task_index"):
            if options and key in options:
                data[key] = options[key]
        self._dialogue = _Dialogue()
        fields = self._dialogue.whole(
            dict(self._call({"type": "reset", "data": data})["observation"])
        )
        self._schema = fields.get("db_schema", "")
        return self._gym_obs(fields), fields.get("info") or {}

    def step(self, action: dict[str, Any] | str) -> tuple[dict, float, bool, bool, dict]:
        payload = {"text": action} if isinstance(action, str) else dict(action)
        out = self._call({"type": "step", "data": payload})
        fields = self._dialogue.whole(dict(out.get("observation") or {}))
        truncated = bool(fields.get("truncated"))
        return (
            self._gym_obs(fields),
            float(out.get("reward") or 0.0),
            bool(out.get("done")) and not truncated,
            truncated,
            fields.get("info") or {},
        )

    def _gym_obs(self, f: dict[str, Any]) -> dict[str, Any]:
        schema = f.get("db_schema") or self._schema  # steps leave the episode's schema out
        return {
            "schema": schema,
            "dialogue": f.get("dialogue", ""),
            "last": f.get("last", ""),
            "turn": int(f.get("turn", 0)),
        }

    def state(self) -> ClarisqlState:
        from clarisql.envs.server.models import ClarisqlState

        return ClarisqlState(**self._call({"type": "state"}))

    def close(self) -> None:
        try:
            self._ws.send(json.dumps({"type": "close"}))
        except Exception:
            pass  # best effort: the connection may be gone already
        self._stack.close()

    def __enter__(self) -> RemoteClarifySQLEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_env_client() -> type:
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient

    from clarisql.envs.server.models import ClarisqlAction, ClarisqlObservation, ClarisqlState

    class ClarisqlEnvClient(EnvClient[ClarisqlAction, ClarisqlObservation, ClarisqlState]):
        """OpenEnv client for a ``clarisql serve`` server (one WebSocket = one session).

        Observations come back whole: it asks for dialogue deltas on ``reset`` and appends
        each step's to the dialogue it holds (steps' ``db_schema`` stays empty).
        """

        _dialogue: _Dialogue | None = None

        async def reset(self, **kwargs: Any) -> StepResult[ClarisqlObservation]:
            kwargs.setdefault("dialogue_deltas", True)
            self._dialogue = _Dialogue()
            return await super().reset(**kwargs)

        def _step_payload(self, action: ClarisqlAction | dict | str) -> dict[str, Any]:
            if isinstance(action, ClarisqlAction):
                return action.model_dump(exclude_none=True, exclude={"metadata"})
            if isinstance(action, str):
                return {"text": action}
            return dict(action)

        def _parse_result(self, payload: dict[str, Any]) -> StepResult[ClarisqlObservation]:
            if self._dialogue is None:
                self._dialogue = _Dialogue()
            fields = self._dialogue.whole(dict(payload.get("observation", {})))
            obs = ClarisqlObservation(
                **fields,
                reward=payload.get("reward"),
                done=bool(payload.get("done", False)),
            )
            return StepResult(observation=obs, reward=obs.reward, done=obs.done)

        def _parse_state(self, payload: dict[str, Any]) -> ClarisqlState:
            return ClarisqlState(**payload)

    ClarisqlEnvClient.__module__ = __name__
    return ClarisqlEnvClient


def __getattr__(name: str) -> Any:
    if name == "ClarisqlEnvClient":
        cls = _make_env_client()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# (ClarisqlEnvClient is made on first access: see the module docstring)
__all__ = ["RemoteClarifySQLEnv", "RemoteError"]
