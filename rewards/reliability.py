"""Correctness and TrustSQL's reliability score."""

from __future__ import annotations

from collections.abc import Sequence

from clarisql.rewards.match import execution_match, state_match
from clarisql.rewards.record import EpisodeRecord


def is_correct(rec: EpisodeRecord) -> bool:
    """Did the episode do the right thing?

    - unanswerable task: the agent abstained;
    - answerable write task: the final-state digest equals the gold digest (not abstained);
    - answerable read task: the agent stopped (not cut off by the turn limit) with an
      untruncated answer that execution-matches the gold rows.
    """
    if not rec.answerable:
        return rec.abstained
    if rec.abstained:
        return False
    if rec.writable:
        return state_match(rec.final_digest, rec.gold_digest)
    if rec.answer_truncated or rec.end == "truncated":
        return False
    return execution_match(rec.answer_rows, rec.gold_rows, ordered=rec.gold_ordered)


def reliability(rec: EpisodeRecord, c: float) -> float:
    """TrustSQL φ_c for one episode.

    +1 for a correct answer or a correct abstention; 0 for abstaining on an answerable task;
    −c for a wrong answer, for answering an unanswerable task, or for running out of turns
    without an answer (a read task cut off by the turn limit has no answer).
    """
    if rec.abstained and rec.answerable:
        return 0.0
    return 1.0 if is_correct(rec) else -float(c)


def reliability_score(records: Sequence[EpisodeRecord], c: float | str) -> float:
    """Mean φ_c over episodes; ``c="N"`` uses the number of episodes (TrustSQL's φ_N)."""
    if not records:
        return 0.0
    cv = float(len(records)) if c == "N" else float(c)
    return sum(reliability(r, cv) for r in records) / len(records)
