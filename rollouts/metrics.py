"""Aggregate metrics over finished episodes (pure functions of episode records)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from clarisql.rewards import EpisodeRecord, reliability_score


def summary_metrics(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """Pass@1, φ_0, φ_10, φ_N, clarifications and turns per episode over ``records``."""
    from clarisql.rewards import is_correct

    n = len(records)
    if n == 0:
        return {"n_episodes": 0}
    return {
        "n_episodes": n,
        "pass@1": sum(is_correct(r) for r in records) / n,
        "phi_0": reliability_score(records, 0),
        "phi_10": reliability_score(records, 10),
        "phi_N": reliability_score(records, "N"),
        "clarifications_per_episode": sum(
            sum(t.kind == "clarify" for t in r.turns) for r in records
        )
        / n,
        "turns_per_episode": sum(len(r.turns) for r in records) / n,
        "abstain_rate": sum(r.abstained for r in records) / n,
    }


def records_from_results(results: Iterable[Any]) -> list[EpisodeRecord]:
    return [
        EpisodeRecord.from_dict(r.summary["record"]) for r in results if r.summary.get("record")
    ]
