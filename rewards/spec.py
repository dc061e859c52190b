"""Composable reward specs.

A spec names components and their weights, in YAML (see ``configs/rewards/``)::

    name: reliability-phi10
    components:
      reliability: {weight: 1.0, c: 10}
      clarification: -0.05

Components (the value each contributes before its weight):
- episode-level, added on the last step: ``outcome`` (1 if :func:`is_correct`, else 0),
  ``execution_match`` (read tasks: rows match), ``state_match`` (write tasks: digest match;
  option ``read_tasks``: ``skip``, the default, scores read tasks 0, ``outcome`` scores a read
  task as ``outcome`` does, right answer or right abstention, as τ-bench, on which DySQL-Bench
  builds, checks a task's required outputs beside the state: on a read task the answer is its
  output, and a read-only suite scored by states alone ties every policy),
  ``reliability`` (TrustSQL φ_c; option ``c``, default 10; option ``no_answer``: ``abstain``,
  the default and the paper's rule, scores a stop without any SQL as an abstention, ``wrong``
  scores it −c, see :mod:`clarisql.rewards.reliability`), ``unneeded_clarification`` (1 per
  thing the episode's clarify turns asked that no gold label needed: labels, or the aspects the
  gate mapped a free-text question to, at least one per turn; counted only for a gated user,
  see :attr:`TurnRecord.n_asked`; charged at the end, so a step's reward never tells the agent
  which of its labels were gold);
- step-level, on the step where it happens: ``clarification`` (1 per clarify action),
  ``unearned_clarification`` (1 per clarify whose labels matched nothing), ``invalid_action``
  (1 per malformed action), ``sql_error`` (1 per failed or refused statement), ``turn`` (1 per
  step).

Every step's reward is the weighted sum of the components that fired, and ``info`` reports each
weighted component, so ablations need no code change. All functions here are pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clarisql.rewards.alternatives import matches_any_gold
from clarisql.rewards.match import state_match
from clarisql.rewards.record import EpisodeRecord, TurnRecord
from clarisql.rewards.reliability import NO_ANSWER_MODES, is_correct, reliability

EPISODE_COMPONENTS = (
    "outcome",
    "execution_match",
    "state_match",
    "reliability",
    "unneeded_clarification",
)
STEP_COMPONENTS = ("clarification", "unearned_clarification", "invalid_action", "sql_error", "turn")
COMPONENTS = EPISODE_COMPONENTS + STEP_COMPONENTS
#: How ``state_match`` scores a read task: ``skip`` (0) or ``outcome`` (as ``outcome`` does).
READ_TASK_MODES = ("skip", "outcome")


class RewardSpecError(ValueError):
    """A reward spec is malformed (unknown component, bad weight, unreadable file)."""


def _finite_number(x: Any) -> bool:
    """An int or float (not a bool) that is finite as a float (NaN, inf, 10**400 are not)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


@dataclass(frozen=True)
class RewardSpec:
    """Weights per component (missing = 0) plus the reliability penalty ``c``, how the
    reliability component counts a stop without any SQL (``no_answer``) and how ``state_match``
    scores a read task (``read_tasks``)."""

    weights: Mapping[str, float] = field(default_factory=lambda: {"outcome": 1.0})
    c: float = 10.0
    name: str = "custom"
    no_answer: str = "abstain"
    read_tasks: str = "skip"

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(COMPONENTS)
        if unknown:
            raise RewardSpecError(
                f"reward spec {self.name!r}: unknown component(s) {sorted(unknown)}; known: {list(COMPONENTS)}"
            )
        for k, w in self.weights.items():
            if not _finite_number(w):
                raise RewardSpecError(
                    f"reward spec {self.name!r}: weight of {k!r} must be a number (and finite), got {w!r}"
                )
        if not _finite_number(self.c) or self.c < 0:
            raise RewardSpecError(
                f"reward spec {self.name!r}: c must be a number >= 0 (and finite), got {self.c!r}"
            )
        if self.no_answer not in NO_ANSWER_MODES:
            raise RewardSpecError(
                f"reward spec {self.name!r}: no_answer must be one of {list(NO_ANSWER_MODES)}, "
                f"got {self.no_answer!r}"
            )
        if self.read_tasks not in READ_TASK_MODES:
            raise RewardSpecError(
                f"reward spec {self.name!r}: read_tasks must be one of {list(READ_TASK_MODES)}, "
                f"got {self.read_tasks!r}"
            )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], name: str | None = None) -> RewardSpec:
        if not isinstance(d, Mapping) or not isinstance(d.get("components"), Mapping):
            raise RewardSpecError(
                f"reward spec {name or d!r}: expected a mapping with 'components'"
            )
        weights: dict[str, float] = {}
        c = 10.0
        no_answer = "abstain"
        read_tasks = "skip"
        for comp, val in d["components"].items():
            if isinstance(val, Mapping):
                if "c" in val:
                    c = val["c"]
                no_answer = val.get("no_answer", no_answer)
                read_tasks = val.get("read_tasks", read_tasks)
                val = val.get("weight", 1.0)
            weights[str(comp)] = val
        return cls(
            weights=weights,
            c=c,
            name=str(d.get("name") or name or "custom"),
            no_answer=no_answer,
            read_tasks=read_tasks,
        )

    @classmethod
    def from_yaml(cls, path: str | Path) -> RewardSpec:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise RewardSpecError(f"cannot read reward spec {p}: {e.strerror or e}") from None
        except yaml.YAMLError as e:
            raise RewardSpecError(f"reward spec {p} is not valid YAML: {e}") from None
        return cls.from_dict(data or {}, name=p.stem)

    def to_dict(self) -> dict[str, Any]:
        comps: dict[str, Any] = dict(self.weights)
        if "reliability" in comps:
            comps["reliability"] = {"weight": comps["reliability"], "c": self.c}
            if self.no_answer != "abstain":
                comps["reliability"]["no_answer"] = self.no_answer
        if "state_match" in comps and self.read_tasks != "skip":
            comps["state_match"] = {"weight": comps["state_match"], "read_tasks": self.read_tasks}
        return {"name": self.name, "components": comps}


def step_components(turn: TurnRecord, spec: RewardSpec) -> dict[str, float]:
    """Weighted step-level components that fire for this turn (zero weights left out)."""
    raw = {
        "turn": 1.0,
        "clarification": 1.0 if turn.kind == "clarify" else 0.0,
        "unearned_clarification": 1.0 if turn.kind == "clarify" and turn.earned is False else 0.0,
        "invalid_action": 0.0 if turn.valid else 1.0,
        "sql_error": 1.0 if turn.sql_error else 0.0,
    }
    return {k: spec.weights[k] * v for k, v in raw.items() if spec.weights.get(k) and v}


def episode_components(rec: EpisodeRecord, spec: RewardSpec) -> dict[str, float]:
    """Weighted episode-level components (for a finished episode)."""
    out: dict[str, float] = {}
    w = spec.weights
    if w.get("outcome"):
        out["outcome"] = w["outcome"] * float(is_correct(rec))
    if w.get("execution_match"):
        ok = (
            not rec.writable
            and rec.answerable
            and not rec.answer_truncated
            and matches_any_gold(rec)
        )
        out["execution_match"] = w["execution_match"] * float(ok)
    if w.get("state_match"):
        if rec.writable:
            ok = state_match(rec.final_digest, rec.gold_digest)
        else:  # a read task leaves the state unchanged for every policy
            ok = spec.read_tasks == "outcome" and is_correct(rec)
        out["state_match"] = w["state_match"] * float(ok)
    if w.get("reliability"):
        out["reliability"] = w["reliability"] * reliability(rec, spec.c, spec.no_answer)
    if w.get("unneeded_clarification") and rec.unneeded_clarifications:
        out["unneeded_clarification"] = w["unneeded_clarification"] * rec.unneeded_clarifications
    return out


def score_episode(rec: EpisodeRecord, spec: RewardSpec) -> tuple[float, dict[str, float]]:
    """Total reward of a finished episode and its components summed over steps."""
    totals: dict[str, float] = {}
    for t in rec.turns:
        for k, v in step_components(t, spec).items():
            totals[k] = totals.get(k, 0.0) + v
    for k, v in episode_components(rec, spec).items():
        totals[k] = totals.get(k, 0.0) + v
    return sum(totals.values()), totals


def preset_dir() -> Path:
    """Folder of the shipped presets (``configs/rewards``)."""
    return Path(__file__).resolve().parent.parent / "configs" / "rewards"


def load_reward_spec(spec: str | Path | Mapping[str, Any] | RewardSpec | None) -> RewardSpec:
    """A :class:`RewardSpec` from a spec, a mapping, a YAML path or a preset name (``None``: default)."""
    if spec is None:
        spec = "default"
    if isinstance(spec, RewardSpec):
        return spec
    if isinstance(spec, Mapping):
        return RewardSpec.from_dict(spec)
    p = Path(spec)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.is_file():
            raise RewardSpecError(f"reward spec file {p} does not exist")
        return RewardSpec.from_yaml(p)
    preset = preset_dir() / f"{spec}.yaml"
    if preset.is_file():
        return RewardSpec.from_yaml(preset)
    names = sorted(x.stem for x in preset_dir().glob("*.yaml"))
    raise RewardSpecError(
        f"unknown reward spec {str(spec)!r}: give a YAML path or one of the presets {names}"
    )
