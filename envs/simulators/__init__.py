"""User simulators: the interface and the built-in modes.

``make_simulator("fixed")`` gives ODUTQA-MDC's gated Fixed-mode simulator,
``make_simulator("dynamic", backend="openai:MODEL@URL")`` its Dynamic mode (paraphrased replies
that must keep the gold values; 5 tries, then the template);
``make_simulator("instruction", backend=...)`` the instruction-following user of DySQL-Bench
(:mod:`clarisql.envs.simulators.instruction`); other modes register with
:func:`register_simulator`.
"""

from __future__ import annotations

from collections.abc import Callable
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


def make_simulator(spec: str | UserSimulator | None = None, **kwargs: Any) -> UserSimulator:
    """A simulator instance from a name (default ``fixed``) or an instance."""
    if isinstance(spec, UserSimulator):
        return spec
    name = spec or "fixed"
    if name not in _REGISTRY:
        raise KeyError(f"unknown user simulator {name!r}: expected one of {sorted(_REGISTRY)}")
    return _REGISTRY[name](**kwargs)


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
]
