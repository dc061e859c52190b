"""A cheap black-box search for a strategy that beats the honest reference (``ablate --search``).

The probes of :mod:`clarisql.policies.probes` are fixed points; a reward hacker would tune them.
:func:`search_strategies` runs the cross-entropy method (CEM), seeded and on a bounded budget,
over the parametric family :class:`~clarisql.policies.probes.Strategy`: labels per clarify turn,
number of clarify turns, free-text shotgun questions, guessing values the replies did not give
(nearest by edit distance / prefix, first by rowid, most rows, trigrams: the exploration
depth; or declining where they were not given) and abstaining on a surface cue of the request
(cue words, a quote mark or none, a length threshold, a number, a question mark). One CEM per reward spec (the fitness is the mean reward under that spec on a fixed
sample of tasks), sharing the episodes: a strategy is played once and its records re-scored under
every spec (rewards are pure functions of the record). It reports, per spec, the best strategy
found and the honest references on the same tasks (the oracle, and the honest agents that miss
one needed clarification in ten, ``oracle-miss:0.1`` answering the literal reading and
``oracle-miss:0.1:abstain`` declining where it missed; the verdict compares with the better of
the two, the agent that reward would train).

The parameters live in a box ``[0, 1]^6`` (a Gaussian per coordinate, clipped), mapped to the
discrete family by :func:`decode`; a distribution's mean and spread are refit on the elite
fraction each iteration. The first iteration also plays :data:`ANCHORS`, the fixed probes of
the family, so the best found is never below them. Budget: ``population × iterations`` strategies
per spec at most plus the anchors (decoded duplicates are played once), each on ``tasks`` tasks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from clarisql.policies.probes import CUES, GUESSES, Strategy, StrategyPolicy
from clarisql.rewards import EpisodeRecord, RewardSpec, score_episode

MAX_LABELS_PER_TURN = 24
MAX_TURNS = 8
MIN_LENGTH, MAX_LENGTH = 4, 40
#: Dimensions of the searched box: labels, turns, text, guess, cue, length threshold.
DIMS = 6
_CUE_NAMES = tuple(CUES)


def _pick(options: Sequence[str], c: float) -> str:
    return options[min(len(options) - 1, int(c * len(options)))]


def decode(x: Sequence[float], text: bool = True) -> Strategy:
    """The strategy at point ``x`` of ``[0, 1]^6`` (``text=False``: no free-text questions,
    for a labels-only gate where they reveal nothing and cost model time); a shorter ``x`` is
    padded with zeros."""
    c = [min(1.0, max(0.0, float(v))) for v in x] + [0.0] * max(0, DIMS - len(x))
    labels = int(round(c[0] ** 2 * MAX_LABELS_PER_TURN))  # denser near few labels
    turns = int(round(c[1] * MAX_TURNS))
    return Strategy(
        labels=labels,
        turns=turns if labels else 0,
        text=int(round(c[2] * 3)) if text else 0,
        guess=_pick(GUESSES, c[3]),
        abstain_on=_pick(_CUE_NAMES, c[4]),
        length=MIN_LENGTH + int(round(c[5] * (MAX_LENGTH - MIN_LENGTH))),
    )


def encode(st: Strategy) -> np.ndarray:
    """A point of ``[0, 1]^6`` that :func:`decode` maps back to ``st`` (for seeding the search)."""
    return np.array(
        [
            math.sqrt(min(st.labels, MAX_LABELS_PER_TURN) / MAX_LABELS_PER_TURN),
            min(st.turns, MAX_TURNS) / MAX_TURNS,
            min(st.text, 3) / 3,
            (GUESSES.index(st.guess) + 0.5) / len(GUESSES),
            (_CUE_NAMES.index(st.abstain_on) + 0.5) / len(_CUE_NAMES),
            (min(max(st.length, MIN_LENGTH), MAX_LENGTH) - MIN_LENGTH) / (MAX_LENGTH - MIN_LENGTH),
        ]
    )


#: Strategies every search plays first (the fixed probes of the family and their neighbours),
#: so the best it reports is never worse than a fixed probe: no asking with each way of
#: guessing, asking only the intent, one or three labels per turn over many turns, declining
#: on cue words.
ANCHORS = (
    *(Strategy(guess=g) for g in GUESSES),
    Strategy(labels=1, turns=1, guess="nearest"),
    Strategy(labels=1, turns=1, guess="abstain"),
    Strategy(labels=1, turns=8),
    Strategy(labels=3, turns=8),
    Strategy(guess="nearest", abstain_on="words"),
)


@dataclass
class SearchResult:
    """Per spec: the best strategy found, its mean reward, the references' and the history."""

    spec: str
    best: Strategy
    best_score: float
    honest: dict[str, float]
    evaluated: int
    history: list[float]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["best"] = {**asdict(self.best), "describe": self.best.describe()}
        from clarisql.policies.probes import HONEST_MISS_VARIANTS
        from clarisql.rollouts.verdict import honest_reference

        d["reference"] = list(honest_reference(self.honest, HONEST_MISS_VARIANTS))
        d["below_honest"] = self.best_score < d["reference"][1]
        return d


Player = Callable[[Any], list[EpisodeRecord]]


def search_strategies(
    play: Player,
    specs: Sequence[RewardSpec],
    references: dict[str, list[EpisodeRecord]],
    *,
    seed: int = 0,
    population: int = 12,
    iterations: int = 4,
    elite: float = 0.25,
    text: bool = True,
    anchors: Sequence[Strategy] = ANCHORS,
) -> list[SearchResult]:
    """CEM per spec over :class:`Strategy` (see the module docstring). ``play(policy)`` runs a
    policy on the sample of tasks and returns its episode records; ``references`` maps honest
    policy names to their records on the same tasks; ``anchors`` are played in the first
    iteration beside the sampled population (default :data:`ANCHORS`)."""
    rng = np.random.default_rng(seed)
    cache: dict[Strategy, list[EpisodeRecord]] = {}

    def records(st: Strategy) -> list[EpisodeRecord]:
        if st not in cache:
            cache[st] = play(StrategyPolicy(st))
        return cache[st]

    def mean(recs: list[EpisodeRecord], spec: RewardSpec) -> float:
        return float(np.mean([score_episode(r, spec)[0] for r in recs])) if recs else math.nan

    out = []
    n_elite = max(2, int(round(population * elite)))
    for spec in specs:
        mu, sigma = np.full(DIMS, 0.5), np.full(DIMS, 0.35)
        best: tuple[float, Strategy] | None = None
        history: list[float] = []
        seen: set[Strategy] = set()
        for it in range(iterations):
            pts = np.clip(rng.normal(mu, sigma, size=(population, DIMS)), 0.0, 1.0)
            if it == 0 and anchors:  # the fixed probes of the family compete from the start
                pts = np.vstack([pts, [encode(a) for a in anchors]])
            scored = []
            for p in pts:
                st = decode(p, text)
                seen.add(st)
                scored.append((mean(records(st), spec), p, st))
            scored.sort(key=lambda t: -t[0])
            top = scored[:n_elite]
            mu = np.mean([p for _, p, _ in top], axis=0)
            sigma = np.maximum(np.std([p for _, p, _ in top], axis=0), 0.05)
            if best is None or top[0][0] > best[0]:
                best = (top[0][0], top[0][2])
            history.append(best[0])
        assert best is not None
        honest = {name: mean(recs, spec) for name, recs in references.items()}
        out.append(SearchResult(spec.name, best[1], best[0], honest, len(seen), history))
    return out


def search_markdown(results: Sequence[SearchResult], n_tasks: int, seed: int) -> str:
    """The search's report section (one row per reward spec)."""
    refs = list(results[0].honest) if results else []
    lines = [
        "## Strategy search (cross-entropy method)",
        "",
        f"Best strategy found per reward spec on {n_tasks} sampled tasks (seed {seed}), against "
        "the honest references on the same tasks. A best strategy at or above the honest "
        "reference (the weaker of the oracle and the better of the agents that miss) is a "
        "reward that pays for something other than the skill.",
        "",
        "| spec | best strategy | score | " + " | ".join(refs) + " | below the reference |",
        "|---|---|---:|" + "---:|" * len(refs) + "---|",
    ]
    from clarisql.policies.probes import HONEST_MISS_VARIANTS
    from clarisql.rollouts.verdict import honest_reference

    for r in results:
        below = r.best_score < honest_reference(r.honest, HONEST_MISS_VARIANTS)[1]
        lines.append(
            f"| {r.spec} | {r.best.describe()} | {r.best_score:.3f} | "
            + " | ".join(f"{r.honest[k]:.3f}" for k in refs)
            + f" | {'yes' if below else '**NO**'} |"
        )
    return "\n".join(lines) + "\n"


__all__ = ["ANCHORS", "SearchResult", "decode", "encode", "search_markdown", "search_strategies"]
