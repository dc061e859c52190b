"""OpenEnv entry point: ``app`` (``uvicorn server.app:app``) and ``main()`` (``uv run server``).

The app is ``clarisql.envs.server.app.make_app`` over the suite named by the environment
variables ``CLARISQL_SUITE`` (default ``builtin``), ``CLARISQL_DATA`` (a data folder),
``CLARISQL_REWARDS`` (a reward spec) and ``CLARISQL_MAX_SESSIONS`` (default 64).
"""

from __future__ import annotations

import os

from clarisql.envs.server import ServeConfig
from clarisql.envs.server.app import make_app


def config_from_env(host: str = "0.0.0.0", port: int = 8000) -> ServeConfig:
    env_kwargs = {}
    if os.environ.get("CLARISQL_REWARDS"):
        env_kwargs["reward"] = os.environ["CLARISQL_REWARDS"]
    data = os.environ.get("CLARISQL_DATA")
    return ServeConfig(
        suite=os.environ.get("CLARISQL_SUITE", "builtin"),
        suite_kwargs={"data": data} if data else {},
        env_kwargs=env_kwargs,
        host=host,
        port=port,
        max_sessions=int(os.environ.get("CLARISQL_MAX_SESSIONS", "64")),
    )


app = make_app(config_from_env())


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serve ``app`` (what ``uv run --project . server`` runs)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="clarisql's OpenEnv server")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    main(args.host, args.port)
