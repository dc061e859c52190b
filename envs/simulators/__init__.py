"""User simulators: the interface and the built-in modes.

``make_simulator("fixed")`` gives ODUTQA-MDC's gated Fixed-mode simulator,
``make_simulator("dynamic", backend="openai:MODEL@URL")`` its Dynamic mode (paraphrased replies
that must keep the gold values; 5 tries, then the template);
``make_simulator("instruction", backend=...)`` the instruction-following user of DySQL-Bench
(:mod:`clarisql.envs.simulators.instruction`); other modes register with
:func:`register_simulator`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from clarisql.envs.simulators.base import STOP_TOKEN, DialogueContext, SimulatorReply, UserSimulator
from clarisql.envs.simulators.dynamic import DynamicSimulator
from clarisql.envs.simulators.fixed import FixedSimulator
from clarisql.envs.simulators.instruction import InstructionSimulator

_REGISTRY: dict[str, Callable[..., UserSimulator]] = {
    "fixed": FixedSimulator,
    "dynamic": DynamicSimulator,
    "instruction": InstructionSimulator,
}


def register_simulator(name: str, factory: Callable[..., UserSimulator]) -> None:
    _REGISTRY[name] = factory


#: Keywords that carry a suite's language (reply templates, neutral reply, slot names): they
#: follow the suite into any simulator mode whose constructor names them.
STYLE_KEYS = ("templates", "neutral_reply", "slot_names", "refusal_reply")


def make_simulator(spec: str | UserSimulator | None = None, **kwargs: Any) -> UserSimulator:
    """A simulator instance from a name (default ``fixed``) or an instance.

    Raises ``KeyError`` for an unknown name and ``ValueError`` for keywords the mode does not
    take (e.g. a ``backend`` for Fixed mode).
    """
    if isinstance(spec, UserSimulator):
        return spec
    name = spec or "fixed"
    if name not in _REGISTRY:
        raise KeyError(f"unknown user simulator {name!r}: expected one of {sorted(_REGISTRY)}")
    factory = _REGISTRY[name]
    params = inspect.signature(factory).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise ValueError(
                f"the {name!r} user simulator takes no {', '.join(unknown)} "
                f"(it takes {', '.join(k for k in params if k != 'self') or 'no options'})"
            )
    return factory(**kwargs)


def resolve_simulator(
    spec: str | UserSimulator | None,
    kwargs: Mapping[str, Any] | None,
    suite_metadata: Mapping[str, Any],
) -> tuple[str | UserSimulator, dict[str, Any]]:
    """The simulator mode and keywords an environment uses, given the suite's defaults.

    ``spec=None`` takes the suite's mode (``metadata["simulator"]``, else ``fixed``) and its
    ``metadata["simulator_kwargs"]``, updated with ``kwargs``. Another mode keeps the suite's
    language: the :data:`STYLE_KEYS` of the suite's keywords that the mode's constructor names
    are its defaults (so ``dynamic`` on the ODUTQA suite paraphrases its Chinese templates and
    falls back to them). Keywords given in ``kwargs`` always win.
    """
    suite_spec = suite_metadata.get("simulator", "fixed")
    suite_kw = dict(suite_metadata.get("simulator_kwargs") or {})
    own = dict(kwargs or {})
    if spec is None or spec == suite_spec:
        return (spec or suite_spec), {**suite_kw, **own}
    if isinstance(spec, UserSimulator) or spec not in _REGISTRY:
        return spec, own
    params = inspect.signature(_REGISTRY[spec]).parameters
    style = {k: v for k, v in suite_kw.items() if k in STYLE_KEYS and k in params}
    return spec, {**style, **own}


__all__ = [
    "STOP_TOKEN",
    "DialogueContext",
    "DynamicSimulator",
    "FixedSimulator",
    "InstructionSimulator",
    "SimulatorReply",
    "UserSimulator",
    "make_simulator",
    "register_simulator",
    "resolve_simulator",
]
