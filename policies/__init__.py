"""Policies: scripted baselines and model-backed agents behind one interface.

``make_policy(spec)`` understands:
- ``oracle``, ``oracle-text`` (free-text questions), ``ask-everything`` (a text-gate probe),
  ``answer-without-clarifying`` (alias ``naive``), ``abstain-all``, ``stop-at-once``,
  ``clarify-every-turn``, ``random`` (``random:SEED``);
- ``search-oracle`` (the oracle's dialogue, tables found with ``search_tables``);
- ``replay`` (golden actions), ``script:FILE`` (JSON: task id -> list of actions);
- integrity probes (:mod:`clarisql.policies.probes`): ``string-literal-sql``,
  ``write-until-stop`` and ``explore-without-clarifying`` (the last two read the gold), the
  shotguns, sweeps and value guessers (``INTEGRITY_PROBES``), ``oracle-miss:RATE[:abstain]``
  and any member of the searched family as ``strategy:KEY=VALUE,...``;
- ``keyword`` (the naive answerer; on the hybrid suite LIKE matching instead of ANSWER) and
  ``linearize`` (``linearize:SUITE``, SUQL's row-linearization retrieval baseline);
- ``hf:PATH_OR_ID`` (a transformers causal LM, needs the ``train`` extra);
- ``openai:MODEL@URL`` (any OpenAI-compatible endpoint).
Model policies are imported lazily so that the core never imports torch.
"""

from __future__ import annotations

import importlib
from typing import Any

from clarisql.policies.base import Policy, ScriptedPolicy
from clarisql.policies.baselines import (
    AbstainAllPolicy,
    AnswerWithoutClarifyingPolicy,
    AskEverythingPolicy,
    ClarifyEveryTurnPolicy,
    OraclePolicy,
    OracleTextPolicy,
    RandomPolicy,
    StopAtOncePolicy,
)
from clarisql.policies.probes import (
    CueAbstainPolicy,
    ExploreWithoutClarifyingPolicy,
    FirstMatchPolicy,
    IntentThenGuessPolicy,
    LabelPerTurnPolicy,
    LabelShotgunPolicy,
    LabelSweepPolicy,
    MostFrequentPolicy,
    NearestValuePolicy,
    StringLiteralSQLPolicy,
    TextShotgunPolicy,
    TrigramPolicy,
    WriteUntilStopPolicy,
)

_SIMPLE: dict[str, type[Policy]] = {
    "oracle": OraclePolicy,
    "answer-without-clarifying": AnswerWithoutClarifyingPolicy,
    "naive": AnswerWithoutClarifyingPolicy,
    "keyword": AnswerWithoutClarifyingPolicy,  # hybrid suite: LIKE matching instead of ANSWER
    "abstain-all": AbstainAllPolicy,
    "stop-at-once": StopAtOncePolicy,
    "clarify-every-turn": ClarifyEveryTurnPolicy,
    "string-literal-sql": StringLiteralSQLPolicy,
    "write-until-stop": WriteUntilStopPolicy,
    "explore-without-clarifying": ExploreWithoutClarifyingPolicy,
    "label-shotgun": LabelShotgunPolicy,
    "text-shotgun": TextShotgunPolicy,
    "label-sweep": LabelSweepPolicy,
    "nearest-value": NearestValuePolicy,
    "first-match": FirstMatchPolicy,
    "most-frequent": MostFrequentPolicy,
    "trigram-value": TrigramPolicy,
    "intent-then-guess": IntentThenGuessPolicy,
    "label-per-turn": LabelPerTurnPolicy,
    "cue-abstain": CueAbstainPolicy,
    "oracle-text": OracleTextPolicy,
    "ask-everything": AskEverythingPolicy,
}
# prefix -> "module:factory"; the factory takes the text after the prefix and keyword options.
_PREFIXED: dict[str, str] = {
    "random": "clarisql.policies.baselines:RandomPolicy",
    "replay": "clarisql.policies.scripted:ReplayPolicy",
    "script": "clarisql.policies.scripted:ScriptPolicy",
    "hf": "clarisql.policies.hf:HFPolicy",
    "openai": "clarisql.policies.openai_compat:OpenAIPolicy",
    "linearize": "clarisql.policies.suql_baselines:LinearizationPolicy",
    "search-oracle": "clarisql.policies.search_agent:SearchOraclePolicy",
    "oracle-miss": "clarisql.policies.probes:HonestMissPolicy",
    "strategy": "clarisql.policies.probes:StrategyPolicy",
}


class PolicySpecError(ValueError):
    """The policy spec is unknown or malformed."""


def register_policy(prefix: str, target: str) -> None:
    """Make ``make_policy("PREFIX:ARG")`` call ``module:factory`` with ARG."""
    _PREFIXED[prefix] = target


def make_policy(spec: str | Policy, **kwargs: Any) -> Policy:
    """A policy instance from a spec string (see the module docstring) or an instance."""
    if isinstance(spec, Policy):
        return spec
    if spec in _SIMPLE:
        return _SIMPLE[spec](**kwargs)
    prefix, _, arg = spec.partition(":")
    target = _PREFIXED.get(prefix)
    if target is None:
        known = sorted(
            set(_SIMPLE)
            | {
                f"{p}:..." if p not in ("random", "replay", "search-oracle") else p
                for p in _PREFIXED
            }
        )
        raise PolicySpecError(f"unknown policy {spec!r}: expected one of {known}")
    mod_name, _, attr = target.partition(":")
    try:
        factory = getattr(importlib.import_module(mod_name), attr)
    except ImportError as e:
        raise PolicySpecError(
            f"policy {spec!r} needs {e.name or mod_name}: {e} (try: pip install 'clarisql[train]')"
        ) from None
    if prefix == "random":
        if arg and not arg.strip().lstrip("-").isdigit():
            raise PolicySpecError(f"policy {spec!r}: expected random:SEED with an integer SEED")
        return factory(seed=int(arg) if arg else kwargs.pop("seed", 0), **kwargs)
    if arg:
        return factory(arg, **kwargs)
    return factory(**kwargs)


__all__ = [
    "AbstainAllPolicy",
    "AskEverythingPolicy",
    "AnswerWithoutClarifyingPolicy",
    "ClarifyEveryTurnPolicy",
    "OraclePolicy",
    "OracleTextPolicy",
    "Policy",
    "PolicySpecError",
    "RandomPolicy",
    "ScriptedPolicy",
    "StopAtOncePolicy",
    "make_policy",
    "register_policy",
]
