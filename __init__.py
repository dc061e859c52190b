"""clarisql: a Gymnasium environment for text-to-SQL agents that clarify, abstain and act.

Importing this package registers ``clarisql/ClarifySQL-v0`` with Gymnasium and never imports
torch (training code lives in :mod:`clarisql.training`, behind the ``train`` extra).
"""

from __future__ import annotations

__version__ = "0.1.0"

from clarisql.envs.registration import register_envs as _register_envs

_register_envs()

__all__ = ["__version__"]
