"""``TextEpisode``: one ClarifySQLEnv episode driven by model replies (what every adapter uses).

A framework hands over the model's reply (text, a chat message with ``tool_calls``, or one
``tool_calls`` item); :meth:`TextEpisode.act` turns it into the env's action, steps the env and
gives back the environment's answer as a chat message, the step reward and whether the episode
ended. Suites are loaded once per process and shared by every episode (frameworks make one
environment object per trajectory).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.splits import TEST_FRACTION, in_split
from clarisql.envs.suites import Suite, load_suite
from clarisql.envs.tool_schemas import tool_schemas

_SUITES: dict[str, Suite] = {}
_SUITES_LOCK = threading.Lock()
#: actions whose answer the env keeps as a ``tool`` message (the others: ``user``)
_ROLES_TOOL = ("execute", "abstain", "stop", "search_tables")


def shared_suite(suite: str | Suite, suite_kwargs: Mapping[str, Any] | None = None) -> Suite:
    """The suite ``suite`` (name or task file) loaded once per process and kwargs."""
    if isinstance(suite, Suite):
        return suite
    key = json.dumps([str(suite), dict(suite_kwargs or {})], sort_keys=True, default=str)
    with _SUITES_LOCK:
        if key not in _SUITES:
            _SUITES[key] = load_suite(suite, **dict(suite_kwargs or {}))
        return _SUITES[key]


@dataclass
class EnvSpec:
    """What builds the env of an episode: the suite, the user gate, the reward spec and any other
    ``ClarifySQLEnv`` keyword (``env_kwargs``); ``split`` keeps the stable-hash split's tasks."""

    suite: str = "builtin"
    gate: str | None = None
    reward: Any = None
    suite_kwargs: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    split: str | None = None
    test_fraction: float = TEST_FRACTION

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any] | None) -> EnvSpec:
        """From a config mapping (an OmegaConf ``DictConfig`` works: it is read key by key)."""
        m = dict(m or {})
        known = {k: m.pop(k) for k in list(m) if k in cls.__dataclass_fields__}
        for key in ("suite_kwargs", "env_kwargs"):
            if known.get(key) is not None:
                known[key] = dict(known[key])
        if m:
            raise ValueError(
                f"unknown clarisql env options {sorted(m)}; expected some of "
                f"{sorted(cls.__dataclass_fields__)}"
            )
        return cls(**{k: v for k, v in known.items() if v is not None})

    def make_env(self) -> ClarifySQLEnv:
        suite = shared_suite(self.suite, self.suite_kwargs)
        kwargs = dict(self.env_kwargs)
        if self.gate is not None:
            kwargs["gate"] = self.gate
        if self.reward is not None:
            kwargs["reward"] = self.reward
        return ClarifySQLEnv(suite, **kwargs)

    def task_ids(self) -> list[str]:
        """The suite's task ids in this spec's split, in suite order."""
        suite = shared_suite(self.suite, self.suite_kwargs)
        return [t.id for t in suite.tasks if in_split(t.id, self.split, self.test_fraction)]


@dataclass
class Turn:
    """What one reply did: the environment's answer as a chat message, the step reward, the end."""

    message: dict[str, Any]
    reward: float
    done: bool
    truncated: bool
    info: dict[str, Any]


def reply_action(reply: Any) -> Any:
    """The env action in a model reply: a chat message's first ``tool_calls`` item (OpenAI
    form: ``{"function": {"name", "arguments"}}``, arguments as JSON text or a dict), else its
    text ``content``; a bare ``tool_calls`` item or text as it is."""
    if isinstance(reply, Mapping):
        calls = reply.get("tool_calls")
        if calls:
            if isinstance(calls, (list, tuple)):
                return _call_action(calls[0])
            # one call not in a list (or junk): the env answers it, nothing raises here
            return _call_action(calls) if isinstance(calls, Mapping) else {"name": None}
        if "function" in reply or ("name" in reply and "arguments" in reply):
            return _call_action(reply)
        content = reply.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        return "" if content is None else str(content)
    if hasattr(reply, "model_dump"):  # a pydantic message (openai, verifiers)
        return reply_action(reply.model_dump())
    return reply


def _call_action(call: Any) -> Any:
    if hasattr(call, "model_dump"):
        call = call.model_dump()
    if not isinstance(call, Mapping):
        return call
    fn = call.get("function", call)
    if not isinstance(fn, Mapping):
        return {"name": None}
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            pass  # the env reports the malformed arguments as an invalid action
    return {"name": fn.get("name"), "arguments": args if args is not None else {}}


class TextEpisode:
    """One episode at a time over a private ``ClarifySQLEnv`` (see the module docstring)."""

    def __init__(self, spec: EnvSpec | Mapping[str, Any] | None = None):
        self.spec = spec if isinstance(spec, EnvSpec) else EnvSpec.from_mapping(spec)
        self.env = self.spec.make_env()
        self.done = True
        self.total = 0.0
        self.last_info: dict[str, Any] = {}
        self.episode: dict[str, Any] | None = None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools (JSON schemas) this episode offers."""
        return tool_schemas(self.env.table_search)

    def start(self, task_id: str | None = None, seed: int | None = None) -> list[dict[str, str]]:
        """Reset to ``task_id`` (else a seeded draw) and give the opening chat: the env's
        system prompt (action format, schema) and the user's opening message."""
        options = {"task_id": str(task_id)} if task_id is not None else None
        _, info = self.env.reset(seed=seed, options=options)
        self.done, self.total, self.episode = False, 0.0, None
        self.last_info = info
        return [dict(m) for m in info["messages"]]

    @property
    def task_id(self) -> str | None:
        return self.env.task.id if self.env.task is not None else None

    def act(self, reply: Any) -> Turn:
        """Step the env with the action in ``reply`` (see :func:`reply_action`)."""
        action = reply_action(reply)
        if action == "":
            action = " "  # (the env answers an empty reply with its usual invalid-action note)
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.done = bool(terminated or truncated) or self.done
        self.total += float(reward)
        self.last_info = info
        if "episode" in info:
            self.episode = info["episode"]
        act = info.get("action") or {}
        kind = act.get("type") if isinstance(act, Mapping) else None
        role = "tool" if kind in _ROLES_TOOL and info.get("error") is None else "user"
        return Turn(
            {"role": role, "content": obs["last"]},
            float(reward),
            bool(terminated or truncated),
            bool(truncated),
            info,
        )

    def components(self) -> dict[str, float]:
        """The finished episode's weighted reward components by name (empty before the end)."""
        if not self.episode:
            return {}
        return {k: float(v) for k, v in (self.episode.get("reward_components") or {}).items()}

    def correct(self) -> bool:
        return bool(self.episode and self.episode.get("correct"))

    def close(self) -> None:
        self.env.close()
