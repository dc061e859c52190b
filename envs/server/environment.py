"""``ClarisqlEnvironment``: one ``ClarifySQLEnv`` behind OpenEnv's ``Environment`` interface."""

from __future__ import annotations

import asyncio
import functools
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.server.config import ServeConfig
from clarisql.envs.server.models import (
    ClarisqlAction,
    ClarisqlObservation,
    ClarisqlState,
    construct_observation,
    jsonable,
)
from clarisql.envs.server.options import check_reset_options
from clarisql.envs.server.sessions import Slot, Slots
from clarisql.envs.suites import Suite, load_suite


class ClarisqlEnvironment(Environment[ClarisqlAction, ClarisqlObservation, ClarisqlState]):
    """One session: a private ``ClarifySQLEnv`` over a suite shared with the other sessions.

    ``reset(seed=None, episode_id=None, task_id=None, task_index=None, dialogue_deltas=False)``
    picks the task as ``ClarifySQLEnv.reset`` does (``task_id``/``task_index`` go into its
    ``options``); ``episode_id`` is the caller's or a new random id (``state.episode_id``);
    ``step(action)`` never raises for a bad action (the env answers with an observation).

    Observations are whole by default (every step carries the schema and the whole dialogue,
    as a generic OpenEnv client expects); ``dialogue_deltas=True`` (what clarisql's own clients
    ask for) sends the schema with ``reset`` only and a step's dialogue from
    ``dialogue_start`` on.

    ``step_async(action)`` (what OpenEnv's WebSocket handler awaits) takes a quick step on the
    event loop itself when it finishes within ``inline_slice_s`` of SQL and calls no model
    (``ClarifySQLEnv.step_inline``); any other step runs on the session's own thread, as every
    step did before. A hop to a thread and back costs more than a small step (two thread switches and
    the loop's self-pipe: ~110-190 µs of server CPU and ~125-170 µs of latency per step, with
    ``benchmarks/bench_server.py``), and the slice bounds what an inline step can hold the loop
    up (see ``ServeConfig.inline_slice_ms``).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        make_env: Callable[[], ClarifySQLEnv],
        inline_slice_s: float = 0.0,
        slot: Slot | None = None,
    ):
        super().__init__()
        #: the counted slot this session holds until close() has returned (see sessions.Slots)
        self._slot = slot
        self._env = make_env()
        self._inline_slice_s = inline_slice_s
        #: the session's own thread for the steps not taken inline (made on first use), as
        #: OpenEnv gives each WebSocket session one: a slow step waits for no other session's
        self._thread: ThreadPoolExecutor | None = None
        self._episode_id: str | None = None
        self._steps = 0
        self._done = False
        self._lock = threading.Lock()  # one session, one caller at a time (HTTP sessions)
        self._sent_dialogue = ""  # the dialogue as of the last observation sent
        self._deltas = False  # this episode's observations: deltas (asked for) or whole

    @property
    def env(self) -> ClarifySQLEnv:
        return self._env

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        task_index: int | None = None,
        dialogue_deltas: bool = False,
        **kwargs: Any,
    ) -> ClarisqlObservation:
        options: dict[str, Any] = {}
        if task_id is not None:
            options["task_id"] = task_id
        if task_index is not None:
            options["task_index"] = task_index
        task_ids = getattr(self, "_task_ids", None)
        if task_ids is None:
            task_ids = self._task_ids = _TaskIds(self._env.suite)
        check_reset_options(
            {"seed": seed, "episode_id": episode_id, "task_id": task_id, "task_index": task_index},
            task_ids,
        )
        with self._lock:
            obs, info = self._env.reset(seed=seed, options=options or None)
            self._episode_id = episode_id or uuid.uuid4().hex
            self._steps, self._done = 0, False
            self._deltas = bool(dialogue_deltas)
            self._sent_dialogue = obs.get("dialogue", "")
            return _observation(obs, 0.0, False, False, info)

    async def reset_async(self, **kwargs: Any) -> ClarisqlObservation:
        """``reset`` on the session's own thread (a reset builds an episode: never on the loop)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), functools.partial(self.reset, **kwargs))

    def _executor(self) -> ThreadPoolExecutor:
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clarisql-step")
        return self._thread

    def step(
        self, action: ClarisqlAction, timeout_s: float | None = None, **kwargs: Any
    ) -> ClarisqlObservation:
        with self._lock:
            act = action.to_env_action() if isinstance(action, ClarisqlAction) else action
            return self._observe(self._env.step(act))

    async def step_async(
        self,
        action: ClarisqlAction,
        timeout_s: float | None = None,
        inline: bool = True,
        **kwargs: Any,
    ) -> ClarisqlObservation:
        """``step`` for an event loop: inline when quick (and ``inline``: the caller says the
        message was small), else on the session's own thread."""
        if inline and self._inline_slice_s > 0 and self._lock.acquire(blocking=False):
            try:
                act = action.to_env_action() if isinstance(action, ClarisqlAction) else action
                out = self._env.step_inline(act, self._inline_slice_s)
                if out is not None:
                    return self._observe(out)
            finally:
                self._lock.release()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), self.step, action)

    def _observe(self, out: tuple) -> ClarisqlObservation:
        """The wire observation of one step's ``(obs, reward, terminated, truncated, info)``
        (called with the lock held)."""
        obs, reward, terminated, truncated, info = out
        self._steps += 1
        self._done = bool(terminated or truncated)
        if not self._deltas:  # whole observations (a generic client)
            return _observation(obs, reward, terminated, truncated, info)
        # the schema is fixed for an episode: sent with reset only (clients keep it); the
        # dialogue only grows within one: only what this step added is sent
        dialogue = obs.get("dialogue", "")
        start = len(self._sent_dialogue)
        if not start or not dialogue.startswith(self._sent_dialogue):
            start = 0  # (not a continuation: sent whole)
        self._sent_dialogue = dialogue
        return _observation(
            obs, reward, terminated, truncated, info, schema=False, dialogue_start=start
        )

    @property
    def state(self) -> ClarisqlState:
        task = self._env.task
        return ClarisqlState(
            episode_id=self._episode_id,
            step_count=self._steps,
            suite=self._env.suite.name,
            task_id=task.id if task is not None else None,
            turn=self._steps,
            done=self._done,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        from clarisql import __version__

        return EnvironmentMetadata(
            name="clarisql",
            description=(
                "Clarification-aware text-to-SQL episodes over sandboxed SQLite: ask the user, "
                f"execute SQL, abstain or stop (suite {self._env.suite.name!r}, "
                f"{len(self._env.suite.tasks)} tasks)"
            ),
            version=__version__,
        )

    def close(self) -> None:
        try:
            with self._lock:  # (a step may still run on the session's thread: closed after it)
                self._env.close()
            if self._thread is not None:
                self._thread.shutdown(wait=False)
        finally:
            if self._slot is not None:  # counted until provably closed
                self._slot.release()


def _observation(
    obs: dict,
    reward: float,
    terminated: bool,
    truncated: bool,
    info: dict,
    schema: bool = True,
    dialogue_start: int = 0,
) -> ClarisqlObservation:
    # built without validation: every field's type is ours to guarantee (validation cost ~25 µs
    # a step), and every field is given, in declaration order (what model_construct makes)
    dialogue = obs.get("dialogue", "")
    return construct_observation(
        {
            "done": bool(terminated or truncated),
            "reward": float(reward),
            "metadata": {},
            "db_schema": obs.get("schema", "") if schema else "",
            "dialogue": dialogue[dialogue_start:] if dialogue_start else dialogue,
            "dialogue_start": dialogue_start,
            "last": obs.get("last", ""),
            "turn": int(obs.get("turn", 0)),
            "truncated": bool(truncated),
            "info": jsonable(info),
        }
    )


class _TaskIds:
    """A suite's task ids and count, computed once (reset options are checked against them)."""

    def __init__(self, suite: Suite):
        self.count = len(suite.tasks)
        self.ids = frozenset(t.id for t in suite.tasks)


class SessionFactory:
    """Makes counted sessions: each takes a slot of ``slots`` before it is built (refused with
    :class:`~clarisql.envs.server.sessions.AtCapacity`) and gives it back when closed. The suite
    is loaded once and shared by every session."""

    def __init__(self, config: ServeConfig, slots: Slots | None = None):
        self.suite: Suite = load_suite(config.suite, **dict(config.suite_kwargs))
        self.task_ids = _TaskIds(self.suite)
        self.slots = slots or Slots(config.max_sessions, config.memory_budget_bytes())
        self._env_kwargs = dict(config.env_kwargs)
        self._inline_slice_s = max(0.0, config.inline_slice_ms) / 1000.0
        ClarisqlEnvironment(self._make_env).close()  # fail at start-up on bad env arguments
        self.__name__ = "clarisql_session"  # (OpenEnv names the factory in its errors)

    def _make_env(self) -> ClarifySQLEnv:
        return ClarifySQLEnv(self.suite, **self._env_kwargs)

    def __call__(self) -> ClarisqlEnvironment:
        slot = self.slots.acquire()
        try:
            env = ClarisqlEnvironment(self._make_env, self._inline_slice_s, slot)
        except BaseException:
            slot.release()
            raise
        env._task_ids = self.task_ids
        self.slots.bind(env, slot)
        return env


def env_factory(config: ServeConfig) -> SessionFactory:
    """A factory of counted sessions (see :class:`SessionFactory`)."""
    return SessionFactory(config)
