"""Task synthesis: suites from any database (``clarisql synth``).

Contract
- Input: one or more SOURCEs (SQLite files and/or folders of CSV files) that together form one
  "lake". :mod:`.ingest` copies them into ONE SQLite database in the output folder, keeping raw
  values (numbers stored as text next to ``'NA'`` stay as they are; generated SQL casts).
- :mod:`.profile` profiles every column (:class:`~.types.ColumnProfile`), marking OrQA's
  low-information columns; :mod:`.discover` finds joinable column pairs (value containment) and
  unionable table pairs (schema + value overlap), exact for small lakes and with datasketch's
  MinHash LSH Ensemble for large ones, scored on OrQA's 0-10 scale.
- :mod:`.answerable` turns the profile into verified read drafts (:class:`~.types.Draft`) at three
  difficulties (simple / moderate / challenging) and three types (single / join / union);
  :mod:`.llm` does the same with OrQA's coder -> question writer -> reviewer loop over an
  OpenAI-compatible endpoint. Every gold query is executed by :class:`~.verify.Verifier` in
  clarisql's read-only sandbox: non-empty, non-trivial, bounded, deterministic order.
- :mod:`.layers` derives underspecified (ODUTQA-MDC), unanswerable (TrustSQL's five kinds) and
  write (DySQL-style) tasks from the drafts.
- :func:`synthesize` (:mod:`.pipeline`) mixes the categories, dedupes utterances, numbers the
  tasks ``synth/NNNN`` and writes ``tasks.jsonl`` (the :class:`clarisql.envs.tasks.Task` schema)
  beside the database, plus ``SUITE.md``. The same SOURCEs, seed and options give a
  byte-identical ``tasks.jsonl``. Bad input raises :class:`SynthError` with one readable line.
- :mod:`.domain` is the plug-in seam for hand-written domains (an invented database and its
  phrasings, e.g. the built-in suite): the domain supplies makers per category, the engine the
  quotas, the checks above on the data, dedup, ids, order and the published folder.
"""

from __future__ import annotations

from typing import Any

from clarisql.envs.synth.types import (
    ColumnProfile,
    Draft,
    JoinPair,
    LakeProfile,
    SynthError,
    TableProfile,
    UnionPair,
)


def __getattr__(name: str) -> Any:
    # The pipeline imports the layers and sqlglot; load it only when asked for.
    if name in ("synthesize", "SynthConfig", "SynthResult"):
        from clarisql.envs.synth import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)


__all__ = [
    "ColumnProfile",
    "Draft",
    "JoinPair",
    "LakeProfile",
    "SynthConfig",
    "SynthError",
    "SynthResult",
    "TableProfile",
    "UnionPair",
    "synthesize",
]
