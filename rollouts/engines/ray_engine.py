"""The Ray engine: batches of episodes on Ray actors (``clarisql eval --engine ray``)."""

from __future__ import annotations

import itertools
from concurrent.futures import Future
from typing import Any

from clarisql.rollouts.engines.local import ExecutorEngine


class _EpisodeActor:
    """One worker: an :class:`~clarisql.rollouts.engines.worker.EpisodeWorker` (envs and
    policies built on first use, ``concurrency`` threads), as in a local worker process."""

    def __init__(self, config: Any, concurrency: int):
        from clarisql.rollouts.engines.worker import init_worker_process

        init_worker_process(config, concurrency)

    def run_batch(self, items: list[Any]) -> list[dict[str, Any]]:
        from clarisql.rollouts.engines.worker import run_batch

        return run_batch(items)

    def pid(self) -> int:
        import os

        return os.getpid()


class RayExecutor:
    """``submit(fn, batch)`` runs ``batch`` on the next actor (round robin); a Future back.

    ``fn`` is ignored: every batch goes to the actor's ``run_batch`` (the local worker
    processes' :func:`~clarisql.rollouts.engines.worker.run_batch`). Actors restart after a crash (``max_restarts``) and their unfinished batch
    is retried (``max_task_retries``); a batch that still fails comes back as an exception,
    which the runner records as failed episodes (to be run again on resume).
    """

    def __init__(
        self,
        config: Any,
        workers: int,
        concurrency: int,
        address: str | None = None,
        max_restarts: int = 3,
    ):
        import ray

        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            kw: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "ignore_reinit_error": True,
            }
            if address:
                kw["address"] = address
            else:  # a local cluster just for this run, sized to it
                kw.update(num_cpus=workers, object_store_memory=128 * 1024 * 1024)
            ray.init(**kw)
        actor_cls = ray.remote(
            num_cpus=1, max_restarts=max_restarts, max_task_retries=max_restarts
        )(_EpisodeActor)
        self.actors = [actor_cls.remote(config, concurrency) for _ in range(workers)]
        self._next = itertools.cycle(range(workers))

    def submit(self, fn: Any, batch: list[Any]) -> Future:
        actor = self.actors[next(self._next)]
        return actor.run_batch.remote(batch).future()

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        for a in self.actors:
            try:
                self._ray.kill(a)
            except Exception:  # an actor already gone
                pass
        self.actors = []
        if self._owns:
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


class RayEngine(ExecutorEngine):
    """The Ray engine: chunks of episodes (sized as for local worker processes) on ``workers``
    actors of a :class:`RayExecutor`, started when the run starts and stopped when it ends."""

    def __init__(self, config: Any, workers: int, concurrency: int, address: str | None = None):
        super().__init__(
            lambda: RayExecutor(config, workers, concurrency, address), workers, concurrency
        )
