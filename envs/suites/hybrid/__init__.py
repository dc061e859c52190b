"""The hybrid suite: a restaurant table with free-text columns, and tasks that need ANSWER.

Contract
- :func:`hybrid_suite` returns ``Suite(name="hybrid")`` over one database (key ``"hybrid"``,
  table ``restaurants``): structural columns (``name``, ``cuisine``, ``neighborhood``,
  ``price``, ``rating``) and free-text columns (``description``, ``reviews`` as a JSON array of
  review texts, ``popular_dishes``). No data download, no model, no GPU.
- Generated from ``seed`` with a private ``random.Random`` only; cached in
  ``<cache_dir>/hybrid-v<GENERATOR_VERSION>-<fingerprint>-seed<seed>/`` where the fingerprint
  hashes this file and the SUQL lexicon/offline backend it writes and checks text with (a
  changed generator never reuses an old cache). Files are written to temporary names and moved
  into place.
- Facts first: each restaurant gets recorded facts (yes/no concepts such as "romantic" or
  "outdoor seating", and slot values: chef, year opened, signature dish); its texts are written
  from them with the wordings of :mod:`clarisql.envs.suql.lexicon` (several paraphrases, some
  without the plain keyword; some texts deny a concept in words that contain the keyword). The
  facts never enter the database. Gold answers (``gold_answer``) are computed from the facts;
  the generator checks that each task's ``gold_sql`` (with ANSWER, offline backend) returns
  exactly them, and that the keyword (LIKE) reading in ``metadata["naive_sql"]`` does not.
- Tasks: SUQL's six HybridQA query types (``metadata["suql_type"]`` 1-6: ANSWER in SELECT;
  ANSWER filter; both; structural + ANSWER filter; aggregate over ANSWER; ORDER BY ANSWER),
  underspecified ones (category ``where``: a vague free-text criterion such as "a nice
  atmosphere", label ``[phrase, slot, "not-exist"]``, the user's clarification revealing the
  criterion meant) and unanswerable ones (TrustSQL: a criterion no column or text supports).
  ``metadata`` holds ``naive_sql`` (keyword matching instead of ANSWER), ``answer_shape``
  (``list`` or ``value``) and ``question`` (the free-text criterion, for retrieval baselines).
"""

from __future__ import annotations

import functools
import os
import random
import tempfile
from pathlib import Path

from clarisql.envs.suites.base import DatabaseSpec, Suite
from clarisql.envs.suites.hybrid.world import (
    CONCEPT_QUESTIONS,
    DB_KEY,
    DESCRIPTION,
    Draft,
    Place,
    _make_world,
    _write_db,
)
from clarisql.envs.tasks import (
    Task,
    load_tasks,
    save_tasks,
)

GENERATOR_VERSION = 1
DB_FILE = "hybrid.sqlite"
TASKS_FILE = "tasks.jsonl"
_SOURCES = (
    Path(__file__).resolve(),
    Path(__file__).resolve().parent / "tasks.py",
    Path(__file__).resolve().parent / "world.py",
    Path(__file__).resolve().parents[2] / "suql" / "lexicon.py",
    Path(__file__).resolve().parents[2] / "suql" / "backends.py",
)


@functools.cache
def generator_fingerprint() -> str:
    """12 hex digits hashing the generator's sources (part of the cache folder name)."""
    from clarisql.envs.suites.builtin import files_fingerprint

    return files_fingerprint(GENERATOR_VERSION, _SOURCES)


def hybrid_folder(seed: int = 0, cache_dir: str | Path | None = None) -> Path:
    from clarisql.envs.suites.builtin import default_cache_dir

    base = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return base / f"hybrid-v{GENERATOR_VERSION}-{generator_fingerprint()}-seed{int(seed)}"


def hybrid_suite(seed: int = 0, cache_dir: str | Path | None = None) -> Suite:
    """The hybrid suite for ``seed``, generated into the cache on first use."""
    folder = hybrid_folder(seed, cache_dir)
    db_path, tasks_path = folder / DB_FILE, folder / TASKS_FILE
    if not (db_path.is_file() and tasks_path.is_file()):
        build_hybrid(folder, seed)
    spec = DatabaseSpec(name=DB_KEY, path=db_path.resolve(), description=DESCRIPTION)
    meta = {
        "seed": int(seed),
        "generator_version": GENERATOR_VERSION,
        "generator_fingerprint": generator_fingerprint(),
        "folder": str(folder),
        "simulator": "fixed",
        "simulator_kwargs": {"templates": {"not-exist": "By '{content}' I mean {value}."}},
    }
    return Suite("hybrid", load_tasks(tasks_path), {DB_KEY: spec}, meta)


def build_hybrid(folder: str | Path, seed: int = 0) -> tuple[Path, Path]:
    """Generate the database and tasks into ``folder`` (atomically); return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_db = tempfile.mkstemp(prefix=".hybrid-", suffix=".sqlite.tmp", dir=folder)
    os.close(fd)
    fd, tmp_tasks = tempfile.mkstemp(prefix=".tasks-", suffix=".jsonl.tmp", dir=folder)
    os.close(fd)
    try:
        tasks = generate_hybrid(tmp_db, seed)
        save_tasks(tasks, tmp_tasks)
        for tmp, final in ((tmp_db, folder / DB_FILE), (tmp_tasks, folder / TASKS_FILE)):
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
    finally:
        for p in (tmp_db, tmp_tasks):
            if os.path.exists(p):
                os.unlink(p)
    return folder / DB_FILE, folder / TASKS_FILE


# --------------------------------------------------------------------------------------------
# the world: facts, then text written from them
# --------------------------------------------------------------------------------------------
def generate_hybrid(db_path: str | Path, seed: int = 0) -> list[Task]:
    """Write the database to ``db_path`` and return the checked tasks (see the module doc)."""
    from clarisql.envs.suites.hybrid.tasks import make_tasks, verify_tasks

    rng = random.Random(seed)
    places = _make_world(rng)
    _write_db(db_path, places)
    drafts = make_tasks(rng, places)
    tasks = [d.to_task(f"draft/{i:04d}") for i, d in enumerate(drafts, 1)]
    kept = verify_tasks(db_path, tasks)
    out = []
    for i, t in enumerate(kept, 1):
        d = t.to_dict()
        d["id"] = f"hybrid/{i:04d}"
        out.append(Task.from_dict(d))
    return out


__all__ = [
    "CONCEPT_QUESTIONS",
    "DESCRIPTION",
    "GENERATOR_VERSION",
    "Draft",
    "Place",
    "build_hybrid",
    "generate_hybrid",
    "hybrid_folder",
    "hybrid_suite",
]
