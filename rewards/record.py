"""The episode record: everything a reward needs, and nothing that needs a database.

Rewards are pure functions of an :class:`EpisodeRecord` (and its :class:`TurnRecord` list), so a
saved run can be re-scored under another reward spec without replaying it. Records are plain
JSON (``to_dict``/``from_dict``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass
class TurnRecord:
    """One agent action as the reward sees it.

    ``kind`` is the action type (``clarify``, ``execute``, ``abstain``, ``stop``) or ``invalid``.
    ``earned`` (clarify only): the agent's labels matched at least one gold label.
    ``sql_error``: an SQL statement of this turn failed or was refused.
    ``hallucinated`` (clarify only): the agent's message to the user stated query results that
    no statement had returned (DySQL-Bench's fabricated ``<result>`` blocks; see
    :mod:`clarisql.envs.hallucination`).
    ``n_asked`` / ``n_needed`` (clarify turns of a gated user only, else ``None``): how many
    things the turn asked about (its distinct labels; for a free-text turn without labels, the
    aspects the gate mapped it to; at least 1) and how many of those are gold labels of the task
    (ODUTQA's label precision is ``sum(n_needed) / sum(n_asked)``).
    """

    kind: str
    valid: bool = True
    sql_error: bool = False
    earned: bool | None = None
    n_labels: int = 0
    n_revealed: int = 0
    hallucinated: bool = False
    n_asked: int | None = None
    n_needed: int | None = None

    @property
    def n_unneeded(self) -> int:
        """Things asked that no gold label needed (0 where not counted)."""
        if self.n_asked is None:
            return 0
        return max(0, self.n_asked - (self.n_needed or 0))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TurnRecord:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class EpisodeRecord:
    """The facts of a finished (or running) episode.

    - ``answer_rows``: rows of the final answer (None: the agent produced no answer);
      ``answer_truncated``: the answer hit the row/byte cap (never counted correct).
    - ``final_digest`` / ``gold_digest``: final-state digests (write tasks): equal iff the states
      are; state keys (``delta:...``, changes against the database) or absolute digests.
    - ``end``: ``stop``, ``abstain``, ``truncated`` (turn limit) or ``running``.
    - ``gold_alternatives``: the rows of each other acceptable reading (``{"rows", "ordered"}``;
      any-of scoring, :mod:`clarisql.rewards.alternatives`); left out of :meth:`to_dict` when empty.
    - ``labels_gold`` / ``labels_found`` (tasks with a gated user, else ``None``): the task's
      gold clarification labels and how many distinct ones the agent's turns asked for
      (ODUTQA's label recall is ``labels_found / labels_gold``; see :attr:`label_recall`).
    """

    task_id: str
    category: str
    answerable: bool
    writable: bool
    gold_rows: list[list[Any]] | None = None
    gold_ordered: bool = False
    gold_digest: str | None = None
    answer_rows: list[list[Any]] | None = None
    answer_truncated: bool = False
    final_digest: str | None = None
    end: str = "running"
    turns: list[TurnRecord] = field(default_factory=list)
    unanswerable_kind: str | None = None
    gold_alternatives: list[dict[str, Any]] = field(default_factory=list)
    labels_gold: int | None = None
    labels_found: int | None = None
    #: the rounding the task states it accepts (``rewards.match``); ``None``: the default rule
    gold_round_digits: int | None = None

    @property
    def abstained(self) -> bool:
        return self.end == "abstain"

    @property
    def label_precision(self) -> float | None:
        """Share of the things asked (labels, or mapped aspects) that the task needed; ``None``
        when nothing gated was asked."""
        asked = sum(t.n_asked or 0 for t in self.turns if t.kind == "clarify")
        if not asked:
            return None
        return sum(t.n_needed or 0 for t in self.turns if t.kind == "clarify") / asked

    @property
    def label_recall(self) -> float | None:
        """Share of the gold labels the agent asked for; ``None`` for a task without any."""
        if not self.labels_gold:
            return None
        return (self.labels_found or 0) / self.labels_gold

    @property
    def unneeded_clarifications(self) -> int:
        """Things asked that no gold label needed, summed over the episode."""
        return sum(t.n_unneeded for t in self.turns if t.kind == "clarify")

    def to_dict(self) -> dict[str, Any]:
        """A plain dict; row lists are shared, not copied (records are not changed once finished:
        deep-copying a 3,503-row answer cost more than the whole query)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["turns"] = [t.to_dict() for t in self.turns]
        if not self.gold_alternatives:
            del d["gold_alternatives"]
        if self.gold_round_digits is None:
            del d["gold_round_digits"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeRecord:
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["turns"] = [TurnRecord.from_dict(t) for t in d.get("turns", [])]
        return cls(**kw)
