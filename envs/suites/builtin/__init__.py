"""The built-in suite: a generated multi-table SQLite database and 310 tasks over it.

Contract
- :func:`builtin_suite` returns ``Suite(name="builtin")`` whose only database key is
  ``"builtin"``; every task has ``db == "builtin"``. Needs no data download, no model, no GPU.
- Everything is generated from ``seed`` with a private ``random.Random(seed)`` (no global random,
  no time, no set/hash order): the same seed and :data:`GENERATOR_VERSION` give byte-identical
  ``tasks.jsonl`` and identical table contents on every machine.
- The suite lives in ``<cache_dir>/builtin-v<GENERATOR_VERSION>-<fingerprint>-seed<seed>/``
  (``builtin.sqlite``, ``tasks.jsonl`` and a ``SUITE.md`` card). ``cache_dir`` defaults to
  ``$CLARISQL_CACHE_DIR`` or ``~/.cache/clarisql``. The fingerprint hashes the generator's source
  files (:data:`GENERATOR_SOURCES` and the engine's checks), so a changed generator (a new
  release, an edited checkout) never reuses a suite an older one cached. A folder holding the
  database and the task file is reused as is; otherwise the suite is generated (about a second)
  into temporary files in that folder and moved into place with :func:`os.replace`, so
  concurrent builders never expose a half-written file. Bump :data:`GENERATOR_VERSION` whenever the output
  changes.

The database (in the spirit of ODUTQA-MDC, where choosing the table is part of the task)
- ``property_sales_<city>_<district>`` and ``land_auctions_<city>_<district>``: one table per city
  and district (8 invented cities with 4-6 districts each; district names repeat across cities);
- ``enterprise_finance_<year>`` for four consecutive years (2018-2021, 2019-2022 or 2020-2023,
  by seed; about 60 enterprises with long official names,
  money in millions);
- ``cities`` and ``districts`` reference tables.

The tasks (ids ``builtin/0001`` ...), shuffled: well-specified reads, ``select`` (intent
underspecified), ``from`` (Missing / Error / Unmatch scope triples for the city, district and year
slots), ``where`` (the common name of a look-alike family of enterprises or projects:
``not-exist``), ``mixed``, the five TrustSQL unanswerable kinds, and ``write`` (golden action
lists, some with underspecifications). Wording gives nothing away where the database decides:
which optional attributes and finance years exist varies by seed, and the answerable and
unanswerable (or value-unclear) questions share their templates (minimal pairs). Every
underspecified read leaves >= 2 readings that no explorer (:mod:`clarisql.envs.explorers`) can
rank (:mod:`.builtin_clarify`). Every task's ``metadata`` holds ``template``, ``tables`` (gold tables read or
written) and ``naive_sql`` (reads) or ``naive_actions`` (writes): what an agent that answers the
question as asked, without clarifying, would run.

How it is made: this suite is one *domain* of the synthesis engine
(:mod:`clarisql.envs.synth.domain`). :class:`BuiltinDomain` supplies only what is specific to this
world: the database (:mod:`.builtin_db`, word lists in :mod:`.builtin_names`), the phrasing and
question templates (:mod:`.builtin_phrasing`, :mod:`.builtin_questions`) and the makers per
category (:mod:`.builtin_reads`, :mod:`.builtin_intents`, :mod:`.builtin_clarify`,
:mod:`.builtin_writes`), with the quotas of :data:`TARGET_COUNTS`. The engine drafts to those
quotas and checks every task on the database in the environment's own sandbox (gold answers
non-trivial; on underspecified and unanswerable tasks the naive SQL runs and gives a different
answer; golden action lists change the state digest and naive ones end elsewhere; unanswerable
requests checked against the schema), dedups utterances, shuffles, numbers, and publishes the
cache folder (with a ``SUITE.md`` card).
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clarisql.envs.sandbox.image_files import cache_dir
from clarisql.envs.suites.base import DatabaseSpec, Suite
from clarisql.envs.tasks import Task, load_tasks

if TYPE_CHECKING:
    from clarisql.envs.synth.domain import DomainRun, Quota

# The generator's modules (the database builder, phrasing, makers, the synthesis engine) are
# imported only to build the suite: loading it from the cache needs none of them (the builder's
# sqlite_utils imports pandas when installed, ~0.25 s in every process that loads the suite).

#: Bump when the generated database or tasks change (it names the cache folder).
GENERATOR_VERSION = 4

DB_KEY = "builtin"
DB_FILE = "builtin.sqlite"
TASKS_FILE = "tasks.jsonl"

#: Tasks per category (and per sub-kind where a category has several).
TARGET_COUNTS: dict[str, int] = {
    "well-specified": 60,
    "select": 40,
    "from:Missing": 20,
    "from:Error": 20,
    "from:Unmatch": 20,
    "where": 40,
    "mixed": 30,
    "unanswerable": 8,  # per kind
    "write": 30,
    "write:underspecified": 10,
}

DESCRIPTION = (
    "Invented cities' property market and enterprise finance. Property sales and land auctions "
    "are kept in one table per city and district: property_sales_<city>_<district> and "
    "land_auctions_<city>_<district> (lower_snake_case names, e.g. property_sales_riverton_old_town"
    "); the cities and districts tables list them. Enterprise finance is kept in one table per "
    "year: enterprise_finance_<year>, four consecutive years (revenue, net_profit, total_assets "
    "and total_liabilities in millions). Prices are in the local currency: unit_price is per "
    "square metre, total_price, reserve_price and winning_bid are totals; areas are in square "
    "metres."
)


class BuiltinDomain:
    """The built-in suite as a domain of the synthesis engine (see the module docstring)."""

    name = "builtin"
    db_key = DB_KEY
    description = DESCRIPTION

    def build_database(self, path: Path, rng: random.Random) -> Any:
        from clarisql.envs.suites.builtin.db import build_database

        return build_database(path, rng)

    def tidy(self, text: str) -> str:
        from clarisql.envs.suites.builtin.phrasing import tidy

        return tidy(text)

    def plan(self, run: DomainRun) -> list[Quota]:
        from clarisql.envs.suites.builtin.writes import BuiltinMakers
        from clarisql.envs.synth.domain import Quota

        m, c = BuiltinMakers(run), TARGET_COUNTS
        quotas = [
            Quota("well-specified", c["well-specified"], m.well_specified_makers()),
            Quota("select", c["select"], m.select_makers()),
        ]
        for kind in ("Missing", "Error", "Unmatch"):
            quotas.append(Quota(f"from:{kind}", c[f"from:{kind}"], m.from_makers(kind)))
        quotas += [
            Quota("where", c["where"], m.where_makers()),
            Quota("mixed", c["mixed"], m.mixed_makers()),
        ]
        for kind, makers in m.unanswerable_makers().items():
            quotas.append(Quota(f"unanswerable:{kind}", c["unanswerable"], makers))
        quotas += [
            Quota("write", c["write"], m.write_makers()),
            Quota("write:underspecified", c["write:underspecified"], m.write_underspec_makers()),
        ]
        return quotas


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    """``$CLARISQL_CACHE_DIR`` if set, else ``~/.cache/clarisql``."""
    return cache_dir()


#: The modules of this folder whose code decides the generated database and tasks.
GENERATOR_SOURCES = (
    "__init__.py",
    "db.py",
    "names.py",
    "phrasing.py",
    "questions.py",
    "reads.py",
    "intents.py",
    "clarify.py",
    "writes.py",
)
#: The engine's modules that decide which drafts are kept (part of the fingerprint too).
_ENGINE_SOURCES = tuple(
    Path(__file__).resolve().parents[2] / "synth" / n
    for n in ("domain.py", "verify.py", "layers/common.py", "layers/unanswerable.py")
)


def files_fingerprint(version: object, paths: Iterable[Path]) -> str:
    """12 hex digits of a hash of ``version`` and the files' names and contents (part of a
    generated suite's cache folder name, so a changed generator never reuses an old suite)."""
    h = hashlib.blake2b(str(version).encode(), digest_size=6)
    for p in paths:
        try:
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        except OSError:  # sources not shipped (a bytecode-only install): the release decides
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as dist_version

            try:
                h.update(dist_version("clarisql").encode())
            except PackageNotFoundError:
                pass
    return h.hexdigest()


def source_fingerprint(folder: str | Path) -> str:
    """12 hex digits of a hash of the built-in generator's source files in ``folder`` (and the
    synthesis engine's checks it runs through)."""
    paths = [*(Path(folder) / n for n in GENERATOR_SOURCES), *_ENGINE_SOURCES]
    return files_fingerprint(GENERATOR_VERSION, paths)


@functools.cache
def generator_fingerprint() -> str:
    """The fingerprint of this generator (part of the cache folder name)."""
    return source_fingerprint(Path(__file__).resolve().parent)


def builtin_folder(seed: int = 0, cache_dir: str | Path | None = None) -> Path:
    """The cache folder of the built-in suite for ``seed`` (not created)."""
    base = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return base / f"builtin-v{GENERATOR_VERSION}-{generator_fingerprint()}-seed{int(seed)}"


def builtin_suite(seed: int = 0, cache_dir: str | Path | None = None) -> Suite:
    """The built-in suite for ``seed``, generated into the cache on first use and reused later."""
    folder = builtin_folder(seed, cache_dir)
    db_path, tasks_path = folder / DB_FILE, folder / TASKS_FILE
    if not (db_path.is_file() and tasks_path.is_file()):
        build_builtin(folder, seed)
    tasks = load_tasks(tasks_path)
    spec = DatabaseSpec(name=DB_KEY, path=db_path.resolve(), description=DESCRIPTION)
    meta = {
        "seed": int(seed),
        "generator_version": GENERATOR_VERSION,
        "generator_fingerprint": generator_fingerprint(),
        "folder": str(folder),
    }
    return Suite(name="builtin", tasks=tasks, databases={DB_KEY: spec}, metadata=meta)


def build_builtin(folder: str | Path, seed: int = 0) -> tuple[Path, Path]:
    """Generate the database, tasks and SUITE.md for ``seed`` into ``folder`` (atomically);
    return the database and task file paths."""
    from clarisql.envs.synth.domain import build_domain_folder

    return build_domain_folder(
        BuiltinDomain(), folder, seed, DB_FILE, TASKS_FILE, version=GENERATOR_VERSION
    )


def generate_builtin(db_path: str | Path, seed: int = 0) -> list[Task]:
    """Write the built-in database to ``db_path`` (a new or empty file) and return its tasks."""
    from clarisql.envs.synth.domain import generate_domain

    return generate_domain(BuiltinDomain(), db_path, seed)


__all__ = [
    "DB_FILE",
    "DB_KEY",
    "DESCRIPTION",
    "GENERATOR_SOURCES",
    "GENERATOR_VERSION",
    "TARGET_COUNTS",
    "BuiltinDomain",
    "build_builtin",
    "builtin_folder",
    "builtin_suite",
    "default_cache_dir",
    "files_fingerprint",
    "generator_fingerprint",
    "source_fingerprint",
    "generate_builtin",
    "TASKS_FILE",
]
