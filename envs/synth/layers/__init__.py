"""Task layers over a profiled lake: underspecified, unanswerable and write tasks.

Contract (shared by the three layers)
- ``clarify_tasks`` (:mod:`.clarify`, ODUTQA-MDC), ``unanswerable_tasks`` (:mod:`.unanswerable`,
  TrustSQL's five kinds) and ``write_tasks`` (:mod:`.writes`, DySQL-Bench style) each take
  ``(lake, drafts, verifier, rng, n)`` and return at most ``n``
  :class:`clarisql.envs.tasks.Task` objects: fewer when the data does not allow more (never
  fake ones); the caller reports the shortfall.
- Nothing but ``rng`` decides: every set and dict is iterated in sorted order, so the same lake
  and seed give the same tasks. Utterances are unique within a layer's output.
- ``task.db`` is the database file's name (tasks.jsonl sits beside it) and ids are provisional
  (``synth-<layer>/NNNN``); the pipeline renumbers them.
- Every task's metadata has ``naive_sql`` (reads) or ``naive_actions`` (writes): what a policy
  that answers as literally asked, without clarifying or abstaining, runs; and ``layer``,
  ``difficulty``, ``qtype``, ``tables``, ``columns``, ``operations`` plus layer-specific facts.
- Every task is checked on the data before it is kept: gold answers are non-trivial, golden
  action lists change the state, literal readings run and give a different answer (or final
  state), and on underspecified tasks exploring the database cannot settle what was meant
  (>= 2 candidate readings give different answers). Unanswerable tasks are checked against the
  schema (the requested column really is absent, etc.).
- :func:`coverage_notes` (:mod:`.coverage`) lists the kinds a suite lacks and why (for SUITE.md).
- :mod:`.freetext` (SUQL, called by the pipeline directly: its signature differs) makes
  ANSWER/SUMMARY tasks over free-text columns, answerable and underspecified, with frozen gold.
- Labels follow :class:`clarisql.envs.tasks.Label`: a scope or name label's ``slot`` is the
  column's name (``year`` for the year of a date column or a family of yearly tables, ``table``
  for another family), and its ``content`` is the text as the user wrote it.
"""

from __future__ import annotations

from clarisql.envs.synth.layers.clarify import clarify_tasks
from clarisql.envs.synth.layers.coverage import coverage_notes
from clarisql.envs.synth.layers.unanswerable import unanswerable_tasks
from clarisql.envs.synth.layers.writes import write_tasks

__all__ = ["clarify_tasks", "coverage_notes", "unanswerable_tasks", "write_tasks"]
