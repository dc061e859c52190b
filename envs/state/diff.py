"""Table-level difference between an episode's final database state and the gold state.

Contract
- :func:`state_diff` compares, table by table, three states of a write task's database: the
  untouched image (``initial``), the gold state (the task's golden actions replayed on a fresh
  session) and the episode's final session. Each state is a
  :class:`~clarisql.envs.state.deferred.StateDigest` (the image plus per-table changes), so the
  diff says which tables differ and their row counts, not which rows.
- Cost: no image table is hashed for it. A table's change against the image is compared
  directly (the same canonical changes the grader's state keys fold, so ``matches_gold``
  agrees with the outcome); row counts of the listed tables come from the digest cache or
  ``SELECT count(*)``. The gold side is computed once per (image, golden actions, config).
- It is written to the end-of-episode summary (``info["episode"]["state_diff"]``), which the
  agent never sees; trajectories keep it for the report page. ``None`` when the task is not a
  write task; gold fields are ``None`` when the task has no golden actions (digest only).
"""

from __future__ import annotations

from typing import Any

import apsw

from clarisql.envs.sandbox.database import DatabaseImage
from clarisql.envs.state.deferred import StateDigest, image_row_count, image_tables
from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.state.gold import GoldError, gold_state
from clarisql.envs.tasks import Task


def state_diff(
    task: Task, final: StateDigest, image: DatabaseImage, config: DigestConfig
) -> dict[str, Any] | None:
    """The table-level diff of a write task's final state against gold (module docstring).

    ``final``: the episode's state (:func:`~clarisql.envs.state.deferred.session_state` of its
    session, which the environment takes once for the final-state digest too).

    ``{"tables": [{"table", "initial_rows", "gold_rows", "final_rows", "matches_gold",
    "changed_by_agent", "changed_by_gold"}...], "unchanged_tables": n, "matches_gold": bool |
    None}`` (plus ``error`` when it could not be computed); only tables that either side
    changed, or that differ from gold, are listed.
    """
    if not task.writable:
        return None
    try:
        initial = set(image_tables(image, config))
        gold = gold_state(task, image, config) if task.gold_actions else None
        names = initial | set(final.tables) | set(gold.tables if gold is not None else ())
        rows = []
        for t in names:
            f = final.entry(t)
            g = gold.entry(t) if gold is not None else None
            if f is None and g is None:  # nobody changed it
                continue
            rows.append(
                {
                    "table": t,
                    "initial_rows": image_row_count(image, t) if t in initial else None,
                    "gold_rows": gold.row_count(t) if gold is not None else None,
                    "final_rows": final.row_count(t),
                    "matches_gold": None if gold is None else f == g,
                    "changed_by_agent": f is not None,
                    "changed_by_gold": g is not None,
                }
            )
    except (GoldError, apsw.Error) as e:  # a diff is for reading: never fail an episode on it
        return {"error": str(e), "tables": [], "unchanged_tables": 0, "matches_gold": None}
    rows.sort(key=lambda r: r["table"])
    unchanged = len(names) - len(rows)
    overall = None if gold is None else all(r["matches_gold"] for r in rows)
    return {"tables": rows, "unchanged_tables": unchanged, "matches_gold": overall}
