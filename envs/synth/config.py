"""The configuration of a synthesis run and what it returns (:class:`SynthConfig`,
:class:`SynthResult`), apart from the pipeline that runs it, so the suite card and the command
line read them without importing the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clarisql.envs.synth.answerable import DraftReport
from clarisql.envs.synth.discover import DiscoveryStats
from clarisql.envs.synth.types import LakeProfile
from clarisql.envs.synth.verify import DEFAULT_STEP_BUDGET
from clarisql.envs.tasks import Task

#: Category shares of a suite. TrustSQL's test sets are half unanswerable; the answerable half is
#: split over well-specified reads, underspecified requests (ODUTQA-MDC) and writes (DySQL).
DEFAULT_MIXTURE: dict[str, float] = {
    "well-specified": 0.2,
    "clarify": 0.2,
    "write": 0.1,
    "unanswerable": 0.5,
}
MIXTURE_ALIASES = {"underspecified": "clarify", "writes": "write", "answerable": "well-specified"}
TASKS_FILE = "tasks.jsonl"
CARD_FILE = "SUITE.md"


@dataclass
class SynthConfig:
    """Options of :func:`synthesize` (``clarisql synth``).

    - ``sources``: SQLite files and/or folders of CSV files, one lake together.
    - ``out``: output folder (``lake.sqlite``, ``tasks.jsonl``, ``SUITE.md``).
    - ``tasks``: number of tasks in the suite; ``seed``: the only source of randomness.
    - ``mixture``: category -> share (normalised); keys ``well-specified``, ``clarify``,
      ``write``, ``unanswerable``.
    - ``llm``: ``openai:MODEL@URL`` for OrQA's coder -> writer -> reviewer loop and the LLM
      pair scorer, and the question writer and reviewer over every task; ``None`` = offline.
      ``llm_threshold``: minimum LLM score (0-10) of a pair; ``llm_workers``: requests in
      flight at once while tasks are reviewed (the output does not depend on it).
    - ``step_budget``: the episode's statement budget in SQLite VM steps; every gold query is
      kept only within half of it (counted, not timed: the suite is the same under any load).
      ``time_budget_s``: the wall-clock safety cap's unit (x10 per statement).
      ``max_rows``: the answer size bound.
    - ``exact_limit``: discovery uses exact containment up to this many candidate columns,
      MinHash LSH Ensemble beyond.
    - ``workers``: threads that run verification queries (``None``: the machine's cores, at
      most 4); the output does not depend on it.
    - ``describe``: a data dictionary (CSV or YAML, :mod:`.describe`): its words name the
      columns in questions, and the described columns are listed for the agent
      (``lake.description.md``, shown above the schema).
    - ``withhold``: how many columns to drop from the suite's copy of the data for
      column-related requests to ask (:mod:`.withhold`; ``None``: one per 25 unanswerable
      tasks, at most 12, where the data allows; 0: none).
    """

    sources: Sequence[str | Path]
    out: str | Path
    tasks: int = 200
    seed: int = 0
    mixture: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIXTURE))
    llm: str | None = None
    llm_threshold: float = 6.0
    llm_cache_dir: str | Path | None = None
    llm_retries: int = 2
    llm_workers: int = 4
    time_budget_s: float = 2.0
    step_budget: int = DEFAULT_STEP_BUDGET
    max_rows: int = 200
    exact_limit: int = 400
    workers: int | None = None
    describe: str | Path | None = None
    withhold: int | None = None


@dataclass
class SynthResult:
    """What :func:`synthesize` wrote and how it went."""

    tasks_path: Path
    db_path: Path
    card_path: Path
    tasks: list[Task]
    lake: LakeProfile
    wanted: dict[str, int]
    made: dict[str, int]
    shortfalls: dict[str, str]
    notes: list[str]
    timings: dict[str, float]
    draft_report: DraftReport
    discovery: DiscoveryStats
