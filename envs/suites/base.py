"""What a suite is: tasks plus the databases they run on (:class:`Suite`, :class:`DatabaseSpec`).

Contract: plain data with the checks a suite must pass when made (unique task ids, every task's
database present); no loader lives here, so every suite module can import it without importing
the registry in :mod:`clarisql.envs.suites`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.tasks import Task, TaskFormatError


@dataclass
class DatabaseSpec:
    """A database a suite's tasks run on.

    - ``path``: the SQLite file (never written: episodes get private copies or read-only handles).
    - ``post_copy_sql``: statements run on every private copy before the episode starts
      (DySQL-Bench's ``retail`` drops a view, for example).
    - ``digest``: how the final-state digest is taken (:class:`clarisql.envs.state.digest.DigestConfig`:
      volatile columns, table order, count-only tables).
    - ``description``: text shown to the agent with the schema (e.g. DySQL's agent policy).
    """

    name: str
    path: Path
    post_copy_sql: list[str] = field(default_factory=list)
    digest: DigestConfig = field(default_factory=DigestConfig)
    description: str | None = None


@dataclass
class Suite:
    """Tasks and the databases they reference (``task.db`` is a key of ``databases``)."""

    name: str
    tasks: list[Task]
    databases: dict[str, DatabaseSpec]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_id = {t.id: t for t in self.tasks}
        if len(self._by_id) != len(self.tasks):
            raise TaskFormatError(f"suite {self.name!r}: task ids are not unique")
        missing = sorted({t.db for t in self.tasks} - set(self.databases))
        if missing:
            raise TaskFormatError(
                f"suite {self.name!r}: tasks reference unknown databases {missing}"
            )

    def __len__(self) -> int:
        return len(self.tasks)

    def task(self, task_id: str) -> Task:
        try:
            return self._by_id[task_id]
        except KeyError:
            raise KeyError(f"suite {self.name!r} has no task {task_id!r}") from None

    def database(self, task: Task) -> DatabaseSpec:
        return self.databases[task.db]

    def subset(self, ids: list[str] | None = None, max_tasks: int | None = None) -> Suite:
        tasks = [self.task(i) for i in ids] if ids is not None else list(self.tasks)
        if max_tasks is not None:
            tasks = tasks[:max_tasks]
        used = {t.db for t in tasks}
        return Suite(
            self.name,
            tasks,
            {k: v for k, v in self.databases.items() if k in used},
            dict(self.metadata),
        )
