"""verl's reward function for clarisql rollouts: the episode reward from the turn scores.

verl's multi-turn rollout keeps each interaction turn's score (the env's step reward, from
:class:`~clarisql.envs.adapters.verl_interaction.ClarisqlInteraction`) and hands them to the
reward function as ``extra_info["turn_scores"]``; their sum is the episode reward under the
reward spec. ``custom_reward_function.path`` points at this file (``configs/verl/``).
"""

from __future__ import annotations

import math
from typing import Any


def compute_score(
    data_source: str | None = None,
    solution_str: str | None = None,
    ground_truth: Any = None,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """The sum of the episode's turn scores (0.0 when verl sent none)."""
    scores = (extra_info or {}).get("turn_scores")
    if scores is None:
        return 0.0
    if hasattr(scores, "tolist"):  # a numpy array
        scores = scores.tolist()
    total = 0.0
    for s in scores if isinstance(scores, (list, tuple)) else [scores]:
        try:
            v = float(s)
        except (TypeError, ValueError):
            continue
        if math.isfinite(v):
            total += v
    return total
