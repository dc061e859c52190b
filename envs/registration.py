"""Gymnasium registration of clarisql's environments."""

from __future__ import annotations

import gymnasium as gym

ENV_ID = "clarisql/ClarifySQL-v0"


def register_envs() -> None:
    """Register ``clarisql/ClarifySQL-v0`` (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="clarisql.envs.env:ClarifySQLEnv")
