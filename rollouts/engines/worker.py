"""Where episodes actually run: an env and a policy per thread, in any process.

:class:`EpisodeWorker` turns a :class:`~clarisql.rollouts.plan.WorkItem` into a result dict,
``{"ok": True, "line": ...}`` (the trajectory line) or ``{"ok": False, "task_id", "trial",
"error", "traceback", "time", "fatal"}``; it never raises for a failing episode. Every thread
builds its own env and policy from the run's :class:`~clarisql.rollouts.plan.RunConfig` on first
use. :func:`init_worker_process` and :func:`run_batch` are the entry points of a worker process
or a Ray actor (module-level, so a spawned process can import them).
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from clarisql.rollouts.plan import RunConfig, WorkItem, load_run_suite


def build_env(config: RunConfig, suite: Any) -> Any:
    """A ``ClarifySQLEnv`` on ``suite`` with the run's env options."""
    from clarisql.envs.env import ClarifySQLEnv

    return ClarifySQLEnv(
        suite,
        simulator=config.simulator,
        simulator_kwargs=config.simulator_kwargs,
        reward=config.reward,
        max_turns=config.max_turns,
        max_clarifications=config.max_clarifications,
        gate=config.gate,
        gate_mapper=config.gate_mapper,
        table_search=config.table_search,
    )


def build_policy(config: RunConfig) -> Any:
    """The run's policy (``make_policy``); a ``PolicySpecError`` for options it does not take."""
    from clarisql.policies import PolicySpecError, make_policy

    try:
        return make_policy(config.policy, **config.policy_kwargs)
    except TypeError as e:
        raise PolicySpecError(
            f"policy {config.policy!r} does not accept these options "
            f"{sorted(config.policy_kwargs)}: {e}"
        ) from None


class EpisodeWorker:
    """Runs work items; every thread gets its own env and policy (built on first use)."""

    def __init__(
        self, config: RunConfig, suite: Any = None, policy: Any = None, own_policy: bool = True
    ):
        self.config = config
        self._suite = suite
        self._first_policy = policy
        self._borrowed = None if own_policy else policy
        self._lock = threading.Lock()
        self._local = threading.local()
        self._made: list[tuple[Any, Any]] = []

    def _pair(self) -> tuple[Any, Any]:
        pair = getattr(self._local, "pair", None)
        if pair is None:
            with self._lock:
                if self._suite is None:
                    self._suite = load_run_suite(self.config)
                policy, self._first_policy = self._first_policy, None
            env = build_env(self.config, self._suite)
            if policy is None:
                policy = build_policy(self.config)
            pair = self._local.pair = (env, policy)
            with self._lock:
                self._made.append(pair)
        return pair

    def run(self, item: WorkItem) -> dict[str, Any]:
        """``{"ok": True, "line": ...}`` or ``{"ok": False, "error": ...}``; never raises."""
        from clarisql.rollouts.episode import run_episode

        t0 = time.time()
        try:
            env, policy = self._pair()
            res = run_episode(
                env,
                policy,
                item.task_id,
                seed=item.seed,
                trial=item.trial,
                policy_seed=item.policy_seed,
            )
            line = res.to_dict()
            line["timings"]["started"] = t0
            line["worker"] = f"{os.getpid()}/{threading.get_ident() % 100000}"
            return {"ok": True, "line": line}
        except Exception as e:  # a policy or setup failure: reported, retried on the next run
            # The env and policy stay: the next episode's reset() starts both afresh.
            return {
                "ok": False,
                "task_id": item.task_id,
                "trial": item.trial,
                "error": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc(),
                "time": t0,
                "fatal": bool(getattr(e, "fatal", False)),
            }

    def close(self) -> None:
        with self._lock:
            made, self._made = self._made, []
        for env, policy in made:
            for obj in (env,) if policy is self._borrowed else (policy, env):
                try:
                    obj.close()
                except Exception:  # closing is best effort
                    pass


# Worker-process state (spawned processes: set by the pool initializer).
_PROC_WORKER: EpisodeWorker | None = None
_PROC_POOL: ThreadPoolExecutor | None = None


def init_worker_process(config: RunConfig, concurrency: int, parent_pid: int | None = None) -> None:
    """Set up this worker process (or Ray actor): one :class:`EpisodeWorker` with
    ``concurrency`` threads; with ``parent_pid``, exit once that process is gone."""
    global _PROC_WORKER, _PROC_POOL
    _PROC_WORKER = EpisodeWorker(config)
    _PROC_POOL = ThreadPoolExecutor(concurrency) if concurrency > 1 else None
    if parent_pid is not None:
        threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()


def _exit_with_parent(parent_pid: int) -> None:
    """A worker whose runner was killed (``kill -9``) must not linger: exit once orphaned."""
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(1)


def run_batch(items: list[WorkItem]) -> list[dict[str, Any]]:
    """Run ``items`` in this worker process (on its threads); their result dicts, in order."""
    assert _PROC_WORKER is not None, "worker process not initialised"
    if _PROC_POOL is None or len(items) == 1:
        return [_PROC_WORKER.run(i) for i in items]
    return list(_PROC_POOL.map(_PROC_WORKER.run, items))
