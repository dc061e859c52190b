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
    """

    kind: str
    valid: bool = True
    sql_error: bool = False
    earned: bool | None = None
    n_labels: int = 0
    n_revealed: int = 0
    hallucinated: bool = False

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

    @property
    def abstained(self) -> bool:
        return self.end == "abstain"

    def to_dict(self) -> dict[str, Any]:
        """A plain dict; row lists are shared, not copied (records are not changed once finished:
        deep-copying a 3,503-row answer cost more than the whole query)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["turns"] = [t.to_dict() for t in self.turns]
        if not self.gold_alternatives:
            del d["gold_alternatives"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeRecord:
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["turns"] = [TurnRecord.from_dict(t) for t in d.get("turns", [])]
        return cls(**kw)
