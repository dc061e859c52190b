"""The local engines: this process (one thread, threads, or lockstep batches) or spawned processes.

Every engine here, and the Ray engine, has the interface of :class:`~clarisql.rollouts.engines.Engine`:
``run(items, handle, stop)`` hands each item's result dict to ``handle`` as it completes (in the
calling thread) and submits nothing more once ``stop()`` is true; ``close()`` closes what the
engine built.

- :class:`ThreadEngine`: this process, ``concurrency`` threads (one: a plain loop), each with
  its own env and policy (an HTTP policy spends its time waiting on the network).
- :class:`BatchEngine`: this process and thread, ``batch_size`` envs in lockstep with one
  policy whose ``act_batch`` batches generation.
- :class:`ExecutorEngine`: chunks of items on a ``concurrent.futures``-style executor, sized by
  :class:`ChunkSizer`; :class:`ProcessEngine` is it on ``workers`` processes, each building its
  own suite, envs and policies from the picklable :class:`~clarisql.rollouts.plan.RunConfig`.
  Workers are *forked* when that is safe (Linux, this process runs a single thread, so no lock
  can be inherited half-held, and has not loaded torch or another library with native thread
  pools or GPU contexts; a forked child drops the parent's cached database images
  and opens its own, :mod:`clarisql.envs.sandbox.database`), so they start with the modules already
  imported (a spawned worker first re-imports numpy, gymnasium and sqlglot: 1-2 s); otherwise,
  or with ``CLARISQL_WORKER_START=spawn``, they are spawned (safe everywhere).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    BrokenExecutor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from typing import Any

from clarisql.rollouts.engines.worker import (
    EpisodeWorker,
    build_env,
    init_worker_process,
    run_batch,
)
from clarisql.rollouts.plan import RunConfig, WorkItem

Handle = Callable[[dict[str, Any]], None]
Stop = Callable[[], bool]


class ThreadEngine:
    """Episodes in this process on ``concurrency`` threads (see the module docstring).

    ``policy``: a policy to use on the first thread instead of building one (closed by
    :meth:`close` only when ``own_policy``).
    """

    def __init__(
        self,
        config: RunConfig,
        suite: Any,
        concurrency: int = 1,
        policy: Any = None,
        own_policy: bool = True,
    ):
        self.concurrency = concurrency
        self.worker = EpisodeWorker(config, suite=suite, policy=policy, own_policy=own_policy)

    def run(self, items: Sequence[WorkItem], handle: Handle, stop: Stop) -> None:
        if self.concurrency == 1:
            for item in items:
                handle(self.worker.run(item))
                if stop():
                    break
            return
        with ThreadPoolExecutor(self.concurrency) as ex:
            drive(ex, self.worker.run, [[i] for i in items], self.concurrency * 2, handle, stop)

    def close(self) -> None:
        self.worker.close()


class BatchEngine:
    """Lockstep episodes on ``batch_size`` envs with one batched policy (this thread)."""

    def __init__(
        self, config: RunConfig, suite: Any, policy: Any, batch_size: int, own_policy: bool
    ):
        self.config, self.suite, self.policy = config, suite, policy
        self.batch_size, self.own_policy = batch_size, own_policy

    def run(self, items: Sequence[WorkItem], handle: Handle, stop: Stop) -> None:
        from clarisql.rollouts.episode import EpisodeResult, run_episode_batch

        n_envs = min(self.batch_size, max(1, len(items)))
        envs = [build_env(self.config, self.suite) for _ in range(n_envs)]
        worker = f"{os.getpid()}/batch"

        def feed() -> Iterator[tuple[str, int | None, int, int | None]]:
            for i in items:
                if stop():
                    return
                yield (i.task_id, i.seed, i.trial, i.policy_seed)

        def on_result(r: EpisodeResult | tuple[tuple[str, int], BaseException]) -> None:
            if isinstance(r, EpisodeResult):
                line = r.to_dict()
                line["worker"] = worker
                handle({"ok": True, "line": line})
            else:
                (tid, trial), e = r
                handle(failure(tid, trial, e))

        try:
            run_episode_batch(envs, self.policy, feed(), on_result)
        finally:
            for env in envs:
                env.close()

    def close(self) -> None:
        if self.own_policy and self.policy is not None:
            self.policy.close()


def failure(task_id: str, trial: int, e: BaseException) -> dict[str, Any]:
    """The result dict of an episode whose policy raised ``e``."""
    return {
        "ok": False,
        "task_id": task_id,
        "trial": trial,
        "time": time.time(),
        "error": f"{type(e).__name__}: {e}",
        "fatal": bool(getattr(e, "fatal", False)),
        "traceback": "".join(traceback.format_exception(type(e), e, e.__traceback__)),
    }


class ExecutorEngine:
    """Chunks of items on the executor ``make_executor()`` returns (a context manager with
    ``submit(fn, batch) -> Future``), ``workers * 2`` chunks in flight; a chunk whose worker died
    comes back as failed episodes (run again on resume)."""

    def __init__(self, make_executor: Callable[[], Any], workers: int, concurrency: int):
        self.make_executor = make_executor
        self.workers, self.concurrency = workers, concurrency

    def run(self, items: Sequence[WorkItem], handle: Handle, stop: Stop) -> None:
        sizer = ChunkSizer(self.concurrency)

        def observe(result: dict[str, Any]) -> None:
            handle(result)
            if result.get("ok"):
                sizer.observe(result["line"]["timings"]["episode_s"])

        batches = sizer.batches(items, self.workers)
        with self.make_executor() as ex:
            drive(ex, run_batch, batches, self.workers * 2, observe, stop, batched=True)

    def close(self) -> None:
        pass


class ProcessEngine(ExecutorEngine):
    """:class:`ExecutorEngine` on ``workers`` spawned processes, ``concurrency`` threads each;
    they exit by themselves if this process is killed."""

    def __init__(self, config: RunConfig, workers: int, concurrency: int):
        import multiprocessing as mp

        def make() -> ProcessPoolExecutor:
            method = worker_start_method()
            if method == "fork":  # a child must not print what this process has buffered
                sys.stdout.flush()
                sys.stderr.flush()
            return ProcessPoolExecutor(
                workers,
                mp_context=mp.get_context(method),
                initializer=init_worker_process,
                initargs=(config, concurrency, os.getpid()),
            )

        super().__init__(make, workers, concurrency)


def worker_start_method() -> str:
    """``fork`` when forking this process is safe (see the module docstring), else ``spawn``.

    ``CLARISQL_WORKER_START`` (``fork``, ``spawn`` or ``auto``, the default) overrides it;
    ``fork`` is still refused where it is unsafe.
    """
    asked = os.environ.get("CLARISQL_WORKER_START", "auto").strip().lower()
    if asked not in ("auto", "fork", "spawn"):
        raise ValueError(f"CLARISQL_WORKER_START must be auto, fork or spawn, got {asked!r}")
    if asked == "spawn":
        return "spawn"
    safe = (
        sys.platform.startswith("linux")
        and threading.active_count() == 1
        # native thread pools and GPU contexts (OpenMP, CUDA) do not survive a fork
        and not any(m in sys.modules for m in _NO_FORK_MODULES)
    )
    return "fork" if safe else "spawn"


#: Modules whose native threads or device state make forking this process unsafe once loaded.
_NO_FORK_MODULES = ("torch", "tensorflow", "jax", "vllm")


class ChunkSizer:
    """How many items to send a worker process at once.

    Sending one episode per message costs more than a fast scripted episode; sending many at
    once makes progress coarse and a slow model policy's chunks long. The chunk aims at about
    ``target_s`` seconds of work per message, from the running mean episode time (1 item per
    thread until an episode has finished), capped at ``max_chunk`` per thread.
    """

    def __init__(self, threads: int = 1, target_s: float = 0.1, max_chunk: int = 32):
        self.threads, self.target_s, self.max_chunk = threads, target_s, max_chunk
        self._n = 0
        self._total = 0.0

    def observe(self, episode_s: float) -> None:
        self._n += 1
        self._total += max(episode_s, 1e-6)

    def size(self) -> int:
        if not self._n:
            return self.threads
        per_thread = int(self.target_s / (self._total / self._n))
        return self.threads * max(1, min(self.max_chunk, per_thread))

    def batches(self, items: Sequence[WorkItem], workers: int) -> Iterator[list[WorkItem]]:
        """Chunks sized on demand, never so large that a worker would sit idle at the end."""
        i = 0
        while i < len(items):
            fair = max(self.threads, -(-(len(items) - i) // (2 * workers)))
            n = min(self.size(), fair)
            yield list(items[i : i + n])
            i += n


def drive(
    ex: Any,
    fn: Callable[[Any], Any],
    jobs: Iterable[Any],
    window: int,
    handle: Handle,
    stop: Stop,
    batched: bool = False,
) -> None:
    """Keep at most ``window`` jobs in flight; hand each result to ``handle`` as it completes.

    A job is a list of items: with ``batched`` the whole list is one call of ``fn`` (which
    returns a list of results), else its single item is.
    """
    it = iter(jobs)
    pending: dict[Future, list[WorkItem]] = {}
    broken = False

    def refill() -> None:
        while len(pending) < window and not stop() and not broken:
            job = next(it, None)
            if job is None:
                return
            pending[ex.submit(fn, job) if batched else ex.submit(fn, job[0])] = job

    refill()
    try:
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in finished:
                job = pending.pop(fut)
                try:
                    res = fut.result()
                    results = res if batched else [res]
                except BaseException as e:  # a worker process died: report its items as failed
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    broken = broken or isinstance(e, BrokenExecutor)
                    results = [_lost(i, e) for i in job]
                for r in results:
                    handle(r)
            refill()
    finally:
        for fut in pending:
            fut.cancel()


def _lost(item: WorkItem, e: BaseException) -> dict[str, Any]:
    return {
        "ok": False,
        "task_id": item.task_id,
        "trial": item.trial,
        "time": time.time(),
        "error": f"worker failed: {type(e).__name__}: {e}",
    }
