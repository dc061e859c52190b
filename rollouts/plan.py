"""The plan of a run: its configuration, and which episodes it runs with which seeds.

Contract
- :class:`RunConfig` is everything that determines a run's episodes (picklable: it is sent to
  worker processes and Ray actors); :meth:`RunConfig.identity` is what ``run.json`` records and
  a resumed run must match.
- :func:`plan_items` makes one :class:`WorkItem` per ``(task_id, trial)``, task-major, each with
  an env seed and a policy seed derived from ``(run seed, task id, trial)`` only, so results do
  not depend on the number of workers, the engine or scheduling.
- :func:`pending` keeps the items whose key a trajectory store does not hold yet (resuming).
- :func:`load_run_suite`, :func:`check_simulator` and :func:`check_databases` fail before any
  episode runs, with one clear error, on a bad suite, simulator or database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Policy-spec prefixes whose time is spent waiting on I/O: default to threaded concurrency.
IO_BOUND_PREFIXES = ("openai:",)


class RunConfigError(ValueError):
    """The run cannot start: a bad configuration, or ``--out`` holds a different run."""


@dataclass
class RunConfig:
    """Everything that determines a run's episodes (picklable; sent to worker processes).

    ``suite``/``suite_kwargs`` go to :func:`clarisql.envs.suites.load_suite`;
    ``policy``/``policy_kwargs`` to :func:`clarisql.policies.make_policy`; ``reward`` is a preset
    name, YAML path or mapping; ``max_turns``/``max_clarifications`` ``None`` take the suite's
    defaults. ``max_episodes`` keeps the first N tasks (a seeded random sample
    of N with ``sample=True``); ``task_ids`` restricts the suite first.
    """

    suite: str
    policy: str
    suite_kwargs: dict[str, Any] = field(default_factory=dict)
    policy_kwargs: dict[str, Any] = field(default_factory=dict)
    reward: Any = "default"
    trials: int = 1
    max_episodes: int | None = None
    sample: bool = False
    seed: int = 0
    max_turns: int | None = None
    max_clarifications: int | None = None
    simulator: str | None = None
    simulator_kwargs: dict[str, Any] = field(default_factory=dict)
    task_ids: list[str] | None = None
    gate: str | None = None  # ClarifySQLEnv(gate=...): labels, text or both
    gate_mapper: str | None = None  # ClarifySQLEnv(gate_mapper=...)
    table_search: bool | None = None  # ClarifySQLEnv(table_search=...)

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise RunConfigError("trials must be >= 1")
        if self.max_episodes is not None and self.max_episodes < 1:
            raise RunConfigError("max-episodes must be >= 1")
        if self.max_turns is not None and self.max_turns < 1:
            raise RunConfigError("max-turns must be >= 1")
        if self.max_clarifications is not None and self.max_clarifications < 0:
            raise RunConfigError("max-clarifications must be >= 0")

    def identity(self) -> dict[str, Any]:
        """The configuration as stored in ``run.json`` and compared on resume.

        The reward spec is stored resolved (a changed YAML file is a different run) and a task
        file suite by its absolute path and the SHA-256 of its content.
        """
        from clarisql.rewards import load_reward_spec

        d = asdict(self)
        for k in (
            "gate",
            "gate_mapper",
            "table_search",
        ):  # left out when unset: older run folders still resume
            if d[k] is None:
                del d[k]
        d["reward"] = load_reward_spec(self.reward).to_dict()
        p = Path(self.suite)
        if p.is_file():
            d["suite"] = str(p.resolve())
            # a task file rewritten in place (e.g. re-synthesized) is another run, not a resume
            d["suite_sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
        for k in ("data", "tasks_file"):
            v = d["suite_kwargs"].get(k)
            if isinstance(v, str) and Path(v).exists():
                d["suite_kwargs"][k] = str(Path(v).resolve())
        return json.loads(json.dumps(d, default=str))


@dataclass(frozen=True)
class WorkItem:
    """One episode to run: a task, its trial number and its env and policy seeds."""

    task_id: str
    trial: int
    seed: int
    policy_seed: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.trial)


def derive_seed(*parts: Any) -> int:
    """A stable 31-bit seed from the parts (SHA-256 of their repr; unlike ``hash``, stable
    across processes and Python versions)."""
    h = hashlib.sha256(repr(parts).encode("utf-8")).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


def select_tasks(config: RunConfig, suite: Any) -> list[str]:
    """The suite's task ids the run covers: ``task_ids`` first, then ``max_episodes`` (the
    first N, or a seeded sample of N with ``sample``)."""
    ids = [t.id for t in suite.tasks]
    if config.task_ids is not None:
        known = set(ids)
        missing = [t for t in config.task_ids if t not in known]
        if missing:
            raise RunConfigError(f"suite {suite.name!r} has no task(s) {missing[:5]}")
        ids = list(config.task_ids)
    if config.max_episodes is not None and config.max_episodes < len(ids):
        if config.sample:
            import numpy as np

            rng = np.random.default_rng(derive_seed(config.seed, "sample"))
            pick = sorted(rng.choice(len(ids), size=config.max_episodes, replace=False).tolist())
            ids = [ids[i] for i in pick]
        else:
            ids = ids[: config.max_episodes]
    return ids


def plan_items(config: RunConfig, task_ids: Sequence[str]) -> list[WorkItem]:
    """One item per (task, trial), task-major; seeds depend only on (run seed, task, trial)."""
    return [
        WorkItem(
            tid,
            k,
            derive_seed(config.seed, "env", tid, k),
            derive_seed(config.seed, "policy", config.policy, tid, k),
        )
        for tid in task_ids
        for k in range(config.trials)
    ]


def pending(items: Sequence[WorkItem], done: Container[tuple[str, int]]) -> list[WorkItem]:
    """The items still to run: those whose ``(task_id, trial)`` is not in ``done`` (a
    :class:`~clarisql.rollouts.store.TrajectoryStore` or a set of keys)."""
    return [i for i in items if i.key not in done]


def default_concurrency(policy_spec: str) -> int:
    """Threads per worker when not given: 8 for network-bound policies, else 1."""
    return 8 if policy_spec.startswith(IO_BOUND_PREFIXES) else 1


# --- checks before any episode runs ---------------------------------------------------------
def check_databases(suite: Any, task_ids: set[str]) -> None:
    """Load the databases of ``task_ids`` once (cached per process), so a missing or corrupt
    database is one clear error before any episode runs (``DatabaseFileError``, a ValueError)."""
    from clarisql.envs.sandbox.database import get_image

    seen: set[str] = set()
    for t in suite.tasks:
        if t.id in task_ids and t.db not in seen:
            seen.add(t.db)
            spec = suite.database(t)
            get_image(spec.path, spec.post_copy_sql)


def load_run_suite(config: RunConfig) -> Any:
    """The run's suite (:func:`clarisql.envs.suites.load_suite` with ``config.suite_kwargs``)."""
    from clarisql.envs.suites import load_suite

    return load_suite(config.suite, **config.suite_kwargs)


def check_simulator(config: RunConfig, suite: Any) -> None:
    """Build the run's user simulator once (and close it), so a bad mode or backend spec fails
    before any episode runs; raises :class:`RunConfigError` with the simulator's message."""
    from clarisql.envs.simulators import make_simulator, resolve_simulator

    spec, kw = resolve_simulator(config.simulator, config.simulator_kwargs, suite.metadata)
    try:
        make_simulator(spec, **kw).close()
    except (ValueError, KeyError, TypeError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise RunConfigError(f"user simulator: {msg}") from None
