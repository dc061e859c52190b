"""Engines: where a run's episodes execute.

Contract: an engine has ``run(items, handle, stop)`` and ``close()`` (:class:`Engine`). ``run``
executes :class:`~clarisql.rollouts.plan.WorkItem` s (each with its env and policy seeds) and
hands each one's result dict (``{"ok": True, "line": ...}`` or ``{"ok": False, "task_id",
"trial", "error", ...}``, see :mod:`~clarisql.rollouts.engines.worker`) to ``handle`` in the
calling thread, as it completes; once ``stop()`` is true it submits nothing more. An engine
never writes files: :func:`clarisql.rollouts.runner.run_eval` keeps the plan, the crash-safe
trajectory store and the reports, so every engine gives the same episodes, the same store and
the same metrics for the same suite and seed. :func:`make_engine` picks one.

- ``local`` (default, :mod:`~clarisql.rollouts.engines.local`): this process (one thread,
  ``concurrency`` threads, or ``batch_size`` envs in lockstep) or ``workers`` spawned worker
  processes.
- ``ray`` (:mod:`clarisql.rollouts.engines.ray_engine`, the ``ray`` extra): one actor per
  worker on a Ray cluster (``--address``, or a local one started for the run). A worker that
  dies is restarted and its batch retried; results reach the store only from the driver, and
  the store skips an episode it already holds, so none is lost or written twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

ENGINES = ("local", "ray")


class Engine(Protocol):
    """Runs work items and reports their results (see the module docstring)."""

    def run(
        self,
        items: Sequence[Any],
        handle: Callable[[dict[str, Any]], None],
        stop: Callable[[], bool],
    ) -> None: ...

    def close(self) -> None: ...


def make_engine(
    engine: str,
    config: Any,
    suite: Any,
    *,
    workers: int = 1,
    concurrency: int = 1,
    batch_size: int = 1,
    policy: Any = None,
    own_policy: bool = True,
    address: str | None = None,
) -> Engine:
    """The engine for these options: Ray for ``engine="ray"``; else lockstep batches for
    ``batch_size > 1``, threads in this process for ``workers == 1``, worker processes beyond.

    ``policy`` (this process only) is used instead of building one from ``config`` and closed
    by the engine's ``close()`` only when ``own_policy``.
    """
    if engine == "ray":
        from clarisql.rollouts.engines.ray_engine import RayEngine

        return RayEngine(config, workers, concurrency, address)
    from clarisql.rollouts.engines import local

    if batch_size > 1:
        return local.BatchEngine(config, suite, policy, batch_size, own_policy)
    if workers == 1:
        return local.ThreadEngine(config, suite, concurrency, policy, own_policy)
    return local.ProcessEngine(config, workers, concurrency)


__all__ = ["ENGINES", "Engine", "make_engine"]
