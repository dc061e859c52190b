"""The rollout runner: N tasks × k trials of one policy on one suite, parallel and resumable.

:func:`run_eval` puts the pieces together:

1. **plan** (:mod:`clarisql.rollouts.plan`): one work item per ``(task_id, trial)``, each with a
   deterministic env seed and policy seed derived from ``(run seed, task id, trial)`` (so
   results do not depend on the number of workers or on scheduling); the items already in
   ``DIR/trajectories.jsonl`` are skipped;
2. **engine** (:mod:`clarisql.rollouts.engines`): runs the rest in this process (one thread,
   ``concurrency`` threads, or ``batch_size`` envs in lockstep), in ``workers`` spawned worker
   processes, or on Ray actors;
3. **store** (:mod:`clarisql.rollouts.store`): only this process appends to the trajectory file
   (crash-safe: see its contract); ``DIR/run.json`` records the run's configuration and a
   second run with the same ``DIR`` must have the same configuration (it then resumes: no
   episode lost or duplicated). Episodes whose policy raised (an endpoint down, a model error)
   are not written to the trajectory file but to ``DIR/errors.jsonl``, so re-running retries
   them; after ``max_errors`` such failures, or one marked ``fatal`` (e.g. HTTP 401), the run
   stops;
4. **report** (:mod:`clarisql.rollouts.report`): ``metrics.json``, ``report.md`` and plots over
   the planned episodes in the store.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clarisql.rollouts.engines import ENGINES, make_engine
from clarisql.rollouts.engines.local import ChunkSizer
from clarisql.rollouts.engines.worker import EpisodeWorker, build_env, build_policy
from clarisql.rollouts.plan import (
    IO_BOUND_PREFIXES,
    RunConfig,
    RunConfigError,
    WorkItem,
    check_databases,
    check_simulator,
    default_concurrency,
    derive_seed,
    load_run_suite,
    pending,
    plan_items,
    select_tasks,
)
from clarisql.rollouts.store import (
    ERRORS_FILE,
    RUN_FILE,
    TRAJECTORY_FILE,
    ErrorLog,
    TrajectoryStore,
    check_run_dir,
)


@dataclass
class RunOutcome:
    """What a :func:`run_eval` call did: episodes planned, stored (``n_done``, of which
    ``n_new`` this call), failed; ``aborted`` says why it stopped early; ``metrics`` are the
    run's (empty without ``write_reports``)."""

    out_dir: Path
    n_planned: int
    n_done: int
    n_new: int
    n_errors: int
    complete: bool
    aborted: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0


def run_eval(
    config: RunConfig,
    out_dir: str | Path,
    *,
    workers: int = 1,
    concurrency: int | None = None,
    progress: bool = True,
    max_errors: int = 20,
    write_reports: bool = True,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    policy: Any = None,
    batch_size: int = 1,
    engine: str = "local",
    address: str | None = None,
) -> RunOutcome:
    """Run (or resume) an evaluation into ``out_dir`` and write its reports.

    ``policy``: an already built policy to use instead of building ``config.policy`` (e.g. a
    model held in memory by a training loop; ``config.policy`` still names it in ``run.json``);
    it runs in this process and is not closed. ``batch_size`` > 1 runs that many episodes in
    lockstep with one policy whose own ``act_batch`` batches generation
    (:func:`clarisql.rollouts.episode.run_episode_batch`; this process, one thread).
    ``engine``: ``"local"`` (this process or ``workers`` spawned processes) or ``"ray"``
    (``workers`` Ray actors, on the cluster at ``address`` or a local one; see
    :mod:`clarisql.rollouts.engines`); the plan, store and reports are the same.
    ``on_result`` sees every result dict (after it is stored).

    Raises :class:`RunConfigError` (and the loaders' ``FileNotFoundError``/``ValueError``/
    ``KeyError``) for problems found before any episode runs; never for a failing episode.
    """
    t_start = time.perf_counter()
    conc = _check_options(config, workers, concurrency, batch_size, engine, policy)
    remote = engine == "ray" or workers > 1  # episodes run outside this process
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise RunConfigError(f"output folder {out} exists and is not a folder")
    suite = load_run_suite(config)
    check_simulator(config, suite)
    items = plan_items(config, select_tasks(config, suite))
    if not items:
        raise RunConfigError(f"suite {suite.name!r}: no tasks selected, nothing to run")
    check_databases(suite, {i.task_id for i in items})
    identity = config.identity()  # validates the reward spec
    check_run_dir(out, identity, None)  # a different run in out_dir: fail before loading a model
    local_policy = _prepare_policy(config, policy, remote, batch_size)
    out.mkdir(parents=True, exist_ok=True)
    options = {"workers": workers, "concurrency": conc, "batch_size": batch_size}
    session = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), **options, "engine": engine}
    check_run_dir(out, identity, {**session, "pid": os.getpid()})
    store = TrajectoryStore(out / TRAJECTORY_FILE)
    existing = store.open()
    planned = {i.key for i in items}
    sink = ResultSink(store, ErrorLog(out / ERRORS_FILE), max_errors, on_result)
    sink.resume(existing, planned, len(items), config.policy if progress else None)
    try:
        kw = dict(options, policy=local_policy, own_policy=policy is None, address=address)
        _run_on_engine(make_engine, engine, config, suite, pending(items, store), sink, kw)
    finally:
        store.close()
        sink.close()
    metrics = _write_reports(out, planned, identity) if write_reports else {}
    return RunOutcome(
        out,
        len(items),
        sink.done,
        sink.new,
        sink.errors,
        sink.done == len(items),
        sink.aborted,
        metrics,
        time.perf_counter() - t_start,
    )


def _run_on_engine(
    factory: Callable[..., Any],
    engine: str,
    config: RunConfig,
    suite: Any,
    todo: list[WorkItem],
    sink: ResultSink,
    kw: dict[str, Any],
) -> None:
    """Run ``todo`` on the engine ``factory`` builds, into ``sink``; close the engine (or, when
    none could be built, the policy handed over in ``kw`` if the run owns it)."""
    runner: Any = None
    try:
        runner = factory(engine, config, suite, **kw)
        runner.run(todo, sink.handle, sink.stopped)
    finally:
        if runner is not None:
            runner.close()
        elif kw["own_policy"] and kw["policy"] is not None:
            kw["policy"].close()


def _check_options(
    config: RunConfig,
    workers: int,
    concurrency: int | None,
    batch_size: int,
    engine: str,
    policy: Any,
) -> int:
    """Validate the execution options; the threads per worker to use."""
    if workers < 1:
        raise RunConfigError("workers must be >= 1")
    if batch_size < 1:
        raise RunConfigError("batch size must be >= 1")
    if engine not in ENGINES:
        raise RunConfigError(f"unknown engine {engine!r}: expected local or ray")
    remote = engine == "ray" or workers > 1
    conc = (
        (1 if batch_size > 1 or policy is not None else default_concurrency(config.policy))
        if concurrency is None
        else int(concurrency)
    )
    if conc < 1:
        raise RunConfigError("concurrency must be >= 1")
    if (policy is not None or batch_size > 1) and (remote or conc > 1):
        raise RunConfigError(
            "a given policy object or --batch-size runs in this process on one thread: "
            "use workers=1 and concurrency=1"
        )
    return conc


def _prepare_policy(config: RunConfig, policy: Any, remote: bool, batch_size: int) -> Any:
    """The policy this process uses (``None`` when episodes run elsewhere).

    Built here when it will be used here (and to fail fast on a bad spec or an unreachable
    endpoint: ``preflight``); with worker processes only cheap policies are probed, then closed.
    """
    from clarisql.policies.base import Policy

    local_policy = policy
    if local_policy is None and (not remote or not config.policy.startswith("hf:")):
        local_policy = build_policy(config)
    if local_policy is None:
        return None
    preflight = getattr(local_policy, "preflight", None)
    if callable(preflight):
        preflight()
    if batch_size > 1 and type(local_policy).act_batch is Policy.act_batch:
        if policy is None:
            local_policy.close()
        raise RunConfigError(
            f"policy {config.policy!r} has no batched act_batch; "
            "use --concurrency or --workers instead of --batch-size"
        )
    if remote:
        local_policy.close()
        return None
    return local_policy


class ResultSink:
    """The driver's end of a run: stores each result, counts, decides when to stop, shows
    progress.

    A successful episode goes to the trajectory store (once per key), a failed one to the error
    log; the run stops after ``max_errors`` failures or at the first one marked ``fatal``.
    """

    def __init__(
        self,
        store: TrajectoryStore,
        errors: ErrorLog,
        max_errors: int,
        on_result: Callable[[dict[str, Any]], None] | None = None,
    ):
        self.store, self.error_log = store, errors
        self.max_errors, self.on_result = max_errors, on_result
        self.done = self.correct = self.new = self.errors = 0
        self.aborted: str | None = None
        self._bar: Any = None

    def resume(
        self,
        existing: Iterable[dict[str, Any]],
        planned: set[tuple[str, int]],
        total: int,
        bar_label: str | None,
    ) -> None:
        """Count the planned episodes already stored; with ``bar_label``, show a progress bar."""
        mine = [x for x in existing if (x["task_id"], x.get("trial", 0)) in planned]
        self.done = len(mine)
        self.correct = sum(bool(x.get("correct")) for x in mine)
        if bar_label is None:
            return
        from tqdm import tqdm

        # no monitor thread: it only tunes miniters for bars updated in bursts, and a process
        # running one thread can fork its workers (clarisql.rollouts.engines.local)
        tqdm.monitor_interval = 0
        self._bar = tqdm(
            total=total,
            initial=self.done,
            unit="ep",
            desc=bar_label[:30],
            dynamic_ncols=True,
            mininterval=0.5,
        )
        if self.done:
            self._bar.set_postfix({"pass@1": f"{self.correct / self.done:.3f}"})

    def stopped(self) -> bool:
        return self.aborted is not None

    def handle(self, result: dict[str, Any]) -> None:
        if result["ok"]:
            line = result["line"]
            if self.store.append(line):
                self.done += 1
                self.new += 1
                self.correct += bool(line.get("correct"))
        else:
            self.errors += 1
            self.error_log.append(result)
            if result.get("fatal") and self.aborted is None:
                self.aborted = (
                    f"stopped at the first error, which retrying cannot fix: {result['error']}"
                )
            elif self.errors >= self.max_errors and self.aborted is None:
                self.aborted = f"{self.errors} episodes failed; last error: {result['error']}"
        if self.on_result is not None:
            self.on_result(result)
        if self._bar is not None:
            self._bar.update(1 if result["ok"] else 0)
            post = {"pass@1": f"{self.correct / self.done:.3f}" if self.done else "-"}
            if self.errors:
                post["errors"] = self.errors
            self._bar.set_postfix(post, refresh=False)

    def close(self) -> None:
        self.error_log.close()
        if self._bar is not None:
            self._bar.close()


def _write_reports(
    out: Path, planned: set[tuple[str, int]], identity: dict[str, Any]
) -> dict[str, Any]:
    """Reports over the planned episodes in the store; their metrics (``{}`` if none)."""
    from clarisql.rollouts.report import write_run_reports
    from clarisql.rollouts.store import read_trajectories

    lines = [
        x
        for x in read_trajectories(out / TRAJECTORY_FILE)
        if (x["task_id"], x.get("trial", 0)) in planned
    ]
    return write_run_reports(out, lines, identity) if lines else {}


# Re-exported: the runner's public names before the split into plan / engines / store.
__all__ = [
    "ERRORS_FILE",
    "IO_BOUND_PREFIXES",
    "RUN_FILE",
    "TRAJECTORY_FILE",
    "ChunkSizer",
    "EpisodeWorker",
    "ResultSink",
    "RunConfig",
    "RunConfigError",
    "RunOutcome",
    "WorkItem",
    "build_env",
    "build_policy",
    "check_databases",
    "check_run_dir",
    "check_simulator",
    "default_concurrency",
    "derive_seed",
    "load_run_suite",
    "plan_items",
    "run_eval",
    "select_tasks",
]
