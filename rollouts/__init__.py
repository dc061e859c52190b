"""Rollouts: run policies on suites (parallel, resumable), score them, report, compare rewards.

- :mod:`~clarisql.rollouts.episode`: one episode (:func:`run_episode`), lockstep batches.
- :mod:`~clarisql.rollouts.runner`: :func:`run_eval`, N tasks × k trials into a run folder.
- :mod:`~clarisql.rollouts.plan`: the run's configuration, its (task, trial, seeds) items.
- :mod:`~clarisql.rollouts.engines`: where episodes run (threads, processes, Ray).
- :mod:`~clarisql.rollouts.store`: the crash-safe ``trajectories.jsonl`` and the run folder.
- :mod:`~clarisql.rollouts.metrics`: Pass@k/Pass^k, φ_c, ECR, detection, table F1, ...
- :mod:`~clarisql.rollouts.odutqa_metrics`: ODUTQA-MDC's detection, ECR and table F1.
- :mod:`~clarisql.rollouts.report`: ``metrics.json``, ``report.md``, plots, ablations.
- :mod:`~clarisql.rollouts.view`: reading trajectories (terminal; HTML through ``web``).
- :mod:`~clarisql.rollouts.web`: the self-contained report page of one or several runs.
- :mod:`~clarisql.rollouts.export`: suites and runs as Hugging Face datasets (``export`` CLI).
- :mod:`~clarisql.rollouts.commands`: the ``eval``/``view``/``rescore``/``ablate`` CLI.
"""

from clarisql.rollouts.episode import EpisodeResult, run_episode, run_episode_batch
from clarisql.rollouts.metrics import compute_metrics, rescore, summary_metrics
from clarisql.rollouts.runner import RunConfig, RunConfigError, RunOutcome, run_eval
from clarisql.rollouts.store import read_trajectories

__all__ = [
    "EpisodeResult",
    "RunConfig",
    "RunConfigError",
    "RunOutcome",
    "compute_metrics",
    "read_trajectories",
    "rescore",
    "run_episode",
    "run_episode_batch",
    "run_eval",
    "summary_metrics",
]
