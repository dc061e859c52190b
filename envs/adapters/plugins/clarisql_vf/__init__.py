"""The verifiers plugin ``clarisql-vf``: clarisql's taskset and env under a top-level name.

verifiers resolves a taskset id to a top-level module (``clarisql-vf`` -> ``clarisql_vf``)
whose ``__all__`` exports one ``Taskset`` and one ``Env`` subclass; this package is installed
as that module (setup.cfg ``package_dir``) and re-exports
:mod:`clarisql.envs.adapters.verifiers_env`. ``vf-eval clarisql-vf`` and
``--env.taskset.id clarisql-vf`` load it.
"""

from clarisql.envs.adapters.verifiers_env import (
    ClarisqlEnv,
    ClarisqlEnvConfig,
    ClarisqlTaskset,
    ClarisqlTasksetConfig,
    load_environment,
)

__all__ = [
    "ClarisqlEnv",
    "ClarisqlEnvConfig",
    "ClarisqlTaskset",
    "ClarisqlTasksetConfig",
    "load_environment",
]
