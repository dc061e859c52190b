"""Importers: standard text-to-SQL formats to clarisql suites.

Contract. Each importer reads one format's folder and writes a suite folder ``out``:

- ``out/tasks.jsonl``: :class:`clarisql.envs.tasks.Task` records; each task's ``db`` is
  ``databases/<db_id>.sqlite``, relative to the task file, so ``--suite out/tasks.jsonl`` loads it;
- ``out/databases/<db_id>.sqlite``: copies of the databases the kept tasks use (never modified;
  ``link=True`` makes them symbolic links to the source files instead);
- ``out/import_report.json``: what was read, kept, rewritten and dropped, each drop with its reason.

Every gold query is made sandbox-safe and checked on the data (:func:`~.common.make_safe`): a
query the sandbox runs as is stays as is; one it refuses only for SQLite's double-quoted-string
quirk is rewritten token by token with sqlglot's tokenizer (a double-quoted name that is no table
or column of the database becomes a single-quoted string) and kept only if its result set equals
the original's, run by plain SQLite where the quirk is on. A gold that fails, or whose rewrite
changes the answer, is dropped with its reason; nothing is dropped silently.

Formats (one module each; the CLI is ``clarisql import FORMAT DIR --out OUT``):

- :mod:`.spider`: Spider-format folders (``*.json`` lists of ``{db_id, question, query}`` and
  ``database/<db_id>/<db_id>.sqlite``); records with several acceptable readings (AmbiQT /
  AMBROSIA style: ``gold_alternatives`` or ``queries`` lists) become tasks with
  ``gold_alternatives``, scored any-of.
- :mod:`.bird`: BIRD-format folders (``{question_id, db_id, question, evidence, SQL}`` and
  ``*_databases/<db_id>/<db_id>.sqlite``).
- :mod:`.cosql`: CoSQL dialogues (user/system turns with dialogue acts): a user turn the system
  answered with a clarification becomes an underspecified task whose clarification value is the
  user's answer; the earlier turns go to ``Task.context``, never into the utterance.
- :mod:`.ehrsql`: EHRSQL-style questions with unanswerable ones (a null/``"null"`` query or
  ``is_impossible``): unanswerable tasks with their kind where the data says it, else ``unknown``.

Errors the user can fix (a missing folder, a file that is not the format) raise
:class:`ImportFormatError` with a one-line message.
"""

from __future__ import annotations

from clarisql.envs.importers.common import ImportFormatError, ImportReport, make_safe

FORMATS = ("spider", "bird", "cosql", "ehrsql")


def import_dataset(fmt: str, src: str, out: str, **kwargs: object) -> ImportReport:
    """Import folder ``src`` in format ``fmt`` (one of :data:`FORMATS`) into suite folder ``out``."""
    if fmt == "spider":
        from clarisql.envs.importers.spider import import_spider as fn
    elif fmt == "bird":
        from clarisql.envs.importers.bird import import_bird as fn
    elif fmt == "cosql":
        from clarisql.envs.importers.cosql import import_cosql as fn
    elif fmt == "ehrsql":
        from clarisql.envs.importers.ehrsql import import_ehrsql as fn
    else:
        raise ImportFormatError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return fn(src, out, **kwargs)  # type: ignore[arg-type]


__all__ = ["FORMATS", "ImportFormatError", "ImportReport", "import_dataset", "make_safe"]
