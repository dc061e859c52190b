"""Any-of gold scoring: a read answer is correct when it matches any acceptable reading.

Tasks with several acceptable readings (AmbiQT/AMBROSIA style) carry ``gold_alternatives``
(:class:`clarisql.envs.tasks.Task`); the episode record holds each alternative's rows and order
flag in :attr:`clarisql.rewards.record.EpisodeRecord.gold_alternatives`. This module is the one
hook the scorers call (:func:`clarisql.rewards.reliability.is_correct` and the
``execution_match`` reward component), so row comparison itself stays in
:mod:`clarisql.rewards.match`.
"""

from __future__ import annotations

from clarisql.rewards.match import execution_match
from clarisql.rewards.record import EpisodeRecord


def matches_any_gold(rec: EpisodeRecord) -> bool:
    """Whether the record's answer rows execution-match the gold rows or any alternative's.

    An alternative is ``{"rows": [[...], ...], "ordered": bool}``; ``None`` answer rows never
    match (as in :func:`~clarisql.rewards.match.execution_match`). The rounding the task
    states (``rec.gold_round_digits``) applies to every reading; ``None``: the default rule.
    """
    kw = {} if rec.gold_round_digits is None else {"round_digits": rec.gold_round_digits}
    if execution_match(rec.answer_rows, rec.gold_rows, ordered=rec.gold_ordered, **kw):
        return True
    return any(
        execution_match(rec.answer_rows, alt.get("rows"), ordered=bool(alt.get("ordered")), **kw)
        for alt in rec.gold_alternatives
    )


__all__ = ["matches_any_gold"]
