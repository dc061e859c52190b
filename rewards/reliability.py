"""Correctness and TrustSQL's reliability score φ_c, as the paper defines it.

TrustSQL (Lee et al., 2024) scores each sample ``x`` with a penalty ``c``:

====================================  ===========================
sample                                φ_c(x)
====================================  ===========================
answerable, SQL predicted, correct    +1
answerable, SQL predicted, wrong      −c
answerable, no SQL predicted          0   (abstention)
unanswerable, no SQL predicted        +1  (correct abstention)
unanswerable, SQL predicted           −c
====================================  ===========================

and ``RS(c) = (1/N) Σ_x φ_c(x)`` over the ``N`` samples of the test set (``c = N`` is φ_N).

How clarisql maps an episode onto a sample:

- **No SQL predicted** is an explicit ``abstain`` *or* a stop (or a user stop) after which the
  agent had run no SQL at all (:func:`no_sql_predicted`): both count as abstention. On an
  answerable write task the final state is the answer, so only ``abstain`` declines there.
- An episode cut off by the turn limit is not an abstention: the agent neither answered nor
  declined within its budget, and scores −c (TrustSQL has no turn limit).
- With several trials per task, each task's φ is the mean over its trials and ``N`` is the
  number of **distinct tasks** scored, so φ_N does not change with ``--trials``.

The reward presets follow the paper; a spec may opt into counting a no-SQL stop as a wrong
answer for training (``no_answer: wrong``, see ``configs/rewards/reliability_phi10_strict.yaml``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from clarisql.rewards.alternatives import matches_any_gold
from clarisql.rewards.match import state_match
from clarisql.rewards.record import EpisodeRecord

#: How a stop with no SQL counts in φ_c: ``abstain`` (TrustSQL) or ``wrong`` (−c, stricter).
NO_ANSWER_MODES = ("abstain", "wrong")


def no_sql_predicted(rec: EpisodeRecord) -> bool:
    """The episode ended by a stop (the agent's or the user's) and the agent ran no SQL.

    No ``execute`` turn, no failed statement, and no answer rows (a stop with SQL that ran
    leaves rows, one whose SQL failed is flagged ``sql_error``). Derived from the record alone.
    Never true on an answerable write task: there the answer is the final database state
    (DySQL-Bench), and leaving it unchanged can be the right outcome.
    """
    if rec.writable and rec.answerable:
        return False
    if rec.end not in ("stop", "user_stop") or rec.answer_rows is not None:
        return False
    return not any(t.kind == "execute" or t.sql_error for t in rec.turns)


def declined(rec: EpisodeRecord) -> bool:
    """TrustSQL's "no SQL predicted": an explicit abstention or a stop without any SQL."""
    return rec.abstained or no_sql_predicted(rec)


def is_correct(rec: EpisodeRecord) -> bool:
    """Did the episode do the right thing?

    - unanswerable task: the agent declined (abstained, or stopped without any SQL);
    - answerable write task: the final-state digest equals the gold digest (not declined);
    - answerable read task: the agent stopped (not cut off by the turn limit) with an
      untruncated answer that execution-matches the gold rows.
    """
    if not rec.answerable:
        return declined(rec)
    if declined(rec):
        return False
    if rec.writable:
        return state_match(rec.final_digest, rec.gold_digest)
    if rec.answer_truncated or rec.end == "truncated":
        return False
    return matches_any_gold(rec)


def reliability(rec: EpisodeRecord, c: float, no_answer: str = "abstain") -> float:
    """TrustSQL φ_c for one episode (table in the module docstring).

    ``no_answer="wrong"`` scores a stop without any SQL −c instead of as an abstention (a
    training option, not the paper's metric); an explicit ``abstain`` is always an abstention.
    """
    if no_answer not in NO_ANSWER_MODES:
        raise ValueError(f"no_answer must be one of {NO_ANSWER_MODES}, got {no_answer!r}")
    if no_answer == "wrong" and no_sql_predicted(rec):
        return -float(c)
    if declined(rec) and rec.answerable:
        return 0.0
    return 1.0 if is_correct(rec) else -float(c)


def reliability_score(records: Sequence[EpisodeRecord], c: float | str) -> float:
    """TrustSQL's RS(c): mean over distinct tasks of each task's mean φ_c over its trials.

    ``c="N"`` uses ``N`` = the number of distinct tasks (``task_id``), whatever the trials.
    """
    if not records:
        return 0.0
    by_task: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        by_task[r.task_id].append(r)
    cv = float(len(by_task)) if c == "N" else float(c)
    per_task = [sum(reliability(r, cv) for r in rs) / len(rs) for rs in by_task.values()]
    return sum(per_task) / len(per_task)
