"""Suites: a named set of tasks plus the databases they run on.

``load_suite(spec)`` accepts
- ``"builtin"``: the embedded, generated suite (no data, no model, no GPU needed);
- ``"dysql"``: DySQL-Bench tasks and databases (keyword ``data=`` the DySQL folder, ``db=`` one
  database), see :mod:`clarisql.envs.suites.dysql`;
- ``"odutqa"``: ODUTQA-MDC's gold records over a full 209-table database built from every
  record file (keywords ``data=`` the records folder, ``split=`` the record set, default
  ``dev``), see :mod:`clarisql.envs.suites.odutqa`;
- ``"hybrid"``: restaurants with free-text columns, tasks that need SUQL's ANSWER (see
  :mod:`clarisql.envs.suites.hybrid`);
- a path to a JSONL task file (task ``db`` fields are paths, relative to the file's folder);
- a :class:`Suite` instance (returned as is).

Other suites can be added with :func:`register_suite`. Every suite also takes
``mixture="ans" | "ans+25" | "ans+unans50"``: TrustSQL's answerable/unanswerable mixtures, cut
deterministically by :func:`clarisql.envs.suites.mixture.apply_mixture`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from clarisql.envs.suites.base import DatabaseSpec, Suite
from clarisql.envs.tasks import TaskFormatError, load_tasks

SuiteFactory = Callable[..., Suite]
_REGISTRY: dict[str, SuiteFactory] = {}


def register_suite(name: str, factory: SuiteFactory) -> None:
    """Make ``load_suite(name, **kw)`` call ``factory(**kw)``."""
    _REGISTRY[name] = factory


def file_suite(path: str | Path) -> Suite:
    """A suite from a JSONL task file; each task's ``db`` is a path relative to the file."""
    p = Path(path)
    tasks = load_tasks(p)
    if not tasks:
        raise TaskFormatError(f"{p}: the task file holds no tasks")
    dbs: dict[str, DatabaseSpec] = {}
    for t in tasks:
        if t.db in dbs:
            continue
        dbp = Path(t.db) if Path(t.db).is_absolute() else (p.parent / t.db)
        if t.db.startswith("suite:"):
            raise TaskFormatError(
                f"{p}: task {t.id!r} references {t.db!r}; load that suite instead"
            )
        if dbp.is_dir():
            raise TaskFormatError(
                f"{p}: task {t.id!r}: database path {dbp} is a directory, not a database file"
            )
        if dbp.exists() and not dbp.is_file():  # a device, FIFO or socket: never opened
            raise TaskFormatError(
                f"{p}: task {t.id!r}: database path {dbp} is not a regular file "
                "(a device, FIFO or socket)"
            )
        if not dbp.is_file():
            raise TaskFormatError(f"{p}: task {t.id!r}: database file {dbp} does not exist")
        # a data dictionary beside the database (``clarisql synth --describe``) is shown to
        # the agent above the schema
        about = dbp.with_name(dbp.stem + ".description.md")
        text = about.read_text(encoding="utf-8")[:20_000] if about.is_file() else None
        dbs[t.db] = DatabaseSpec(name=t.db, path=dbp.resolve(), description=text)
    return Suite(p.stem, tasks, dbs, {"source": str(p)})


def load_suite(spec: str | Path | Suite, **kwargs: Any) -> Suite:
    """Resolve a suite name, task-file path or :class:`Suite` (see the module docstring);
    ``mixture`` (any suite) keeps a TrustSQL answerable/unanswerable mixture of its tasks."""
    mixture = kwargs.pop("mixture", None)
    if mixture is not None:
        from clarisql.envs.suites.mixture import apply_mixture

        return apply_mixture(load_suite(spec, **kwargs), mixture)
    if isinstance(spec, Suite):
        return spec
    key = str(spec)
    if key in _REGISTRY:
        return _REGISTRY[key](**kwargs)
    p = Path(key)
    if p.suffix in (".jsonl", ".json") or p.is_file():
        if not p.is_file():
            raise FileNotFoundError(f"task file {p} does not exist")
        return file_suite(p)
    raise KeyError(
        f"unknown suite {key!r}: expected one of {sorted(_REGISTRY)} or a .jsonl task file"
    )


def _builtin(**kw: Any) -> Suite:
    from clarisql.envs.suites.builtin import builtin_suite

    return builtin_suite(**kw)


def _dysql(**kw: Any) -> Suite:
    from clarisql.envs.suites.dysql import dysql_suite

    return dysql_suite(**kw)


def _odutqa(**kw: Any) -> Suite:
    from clarisql.envs.suites.odutqa import odutqa_suite

    return odutqa_suite(**kw)


def _hybrid(**kw: Any) -> Suite:
    from clarisql.envs.suites.hybrid import hybrid_suite

    return hybrid_suite(**kw)


register_suite("builtin", _builtin)
register_suite("hybrid", _hybrid)
register_suite("dysql", _dysql)
register_suite("odutqa", _odutqa)

__all__ = ["DatabaseSpec", "Suite", "file_suite", "load_suite", "register_suite"]
