"""The environment side: tasks, database sessions, digests, user simulators, suites, the Env.

Importing this package does not import torch.
"""

from clarisql.envs.actions import Action, ActionError, parse_action
from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.registration import ENV_ID
from clarisql.envs.sandbox.database import (
    DatabaseImage,
    ExecResult,
    Session,
    SessionLimits,
    get_image,
)
from clarisql.envs.state.deferred import session_digest
from clarisql.envs.state.digest import DigestConfig
from clarisql.envs.suites import DatabaseSpec, Suite, load_suite
from clarisql.envs.suql import configure as configure_suql  # registers ANSWER/SUMMARY on sessions
from clarisql.envs.tasks import Label, Task, TaskFormatError, Underspec, load_tasks, save_tasks

__all__ = [
    "ENV_ID",
    "Action",
    "ActionError",
    "ClarifySQLEnv",
    "DatabaseImage",
    "DatabaseSpec",
    "DigestConfig",
    "ExecResult",
    "Label",
    "Session",
    "SessionLimits",
    "Suite",
    "Task",
    "TaskFormatError",
    "Underspec",
    "configure_suql",
    "get_image",
    "load_suite",
    "load_tasks",
    "parse_action",
    "save_tasks",
    "session_digest",
]
