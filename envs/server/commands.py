"""``clarisql serve``: the environment as an OpenEnv-compatible server (thin shell over ``serve``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the environment over HTTP/WebSocket (OpenEnv protocol)",
        description="Serve the environment over HTTP and WebSocket (OpenEnv protocol).",
        epilog="examples:\n"
        "  clarisql serve --suite builtin --port 8000 --max-sessions 2048\n"
        "  openenv validate --url http://127.0.0.1:8000",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--suite",
        default="builtin",
        metavar="SUITE",
        help="suite name or task file (default: builtin)",
    )
    p.add_argument(
        "--data", default=None, metavar="DIR", help="data folder for the dysql / odutqa suites"
    )
    p.add_argument(
        "--reward",
        "--rewards",
        dest="rewards",
        default=None,
        metavar="SPEC",
        help="reward spec: preset name or YAML file (default: default)",
    )
    p.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other ClarifySQLEnv keyword (VALUE parsed as JSON when it can be)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="HOST",
        help="address to listen on (default: %(default)s, this machine only)",
    )
    p.add_argument(
        "--port", type=int, default=8000, metavar="PORT", help="port (default: %(default)s)"
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=2048,
        metavar="N",
        help="concurrent sessions; more are refused (default: %(default)s)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="close a session idle this long; 0 = never (default: %(default)s)",
    )
    p.add_argument(
        "--ws-compression",
        action="store_true",
        help="accept WebSocket per-message compression (off: small step replies cost more "
        "to compress than to send; on for slow links)",
    )
    p.add_argument(
        "--inline-slice-ms",
        type=float,
        default=2.0,
        metavar="MS",
        help="take a WebSocket step that runs one read statement on the event loop when its "
        "SQL finishes within this many ms (else on a thread); 0: every step on a thread",
    )
    p.add_argument(
        "--max-message-bytes",
        type=int,
        default=1 << 20,
        metavar="N",
        help="largest WebSocket message / HTTP body taken (refused with an error past it)",
    )
    p.add_argument(
        "--memory-budget-mb",
        type=float,
        default=None,
        metavar="N",
        help="refuse new sessions while the server's memory is above this (default: 80%% of RAM)",
    )
    p.set_defaults(func=_serve)


def _env_args(pairs: list[str]) -> dict:
    from clarisql.cli import UserError

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--env-arg {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


class _NoWebInterface:
    """A meta-path finder that makes ``gradio`` unavailable while openenv-core is imported.

    openenv-core imports its optional web interface (gradio, seconds of start-up) on any import
    of its server package, and treats a missing gradio as "no web interface"
    (``ModuleNotFoundError`` is caught there). ``clarisql serve`` serves no web interface, so it
    imports openenv-core through this finder (removed right after: gradio imports normally
    later in the process), unless ``ENABLE_WEB_INTERFACE`` asks for openenv's web interface.
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "gradio" or name.startswith("gradio."):
            raise ModuleNotFoundError(f"No module named {name!r} (not loaded by clarisql serve)")
        return None


def _import_server() -> Any:
    """``clarisql.envs.server.app`` imported without openenv's web interface (see above)."""
    web = os.environ.get("ENABLE_WEB_INTERFACE", "false").lower() in ("true", "1", "yes")
    blocker = None if web or "gradio" in sys.modules else _NoWebInterface()
    if blocker is not None:
        sys.meta_path.insert(0, blocker)
    try:
        from clarisql.envs.server import app
    finally:
        if blocker is not None:
            sys.meta_path.remove(blocker)
    return app


def _say(message: str, t0: float) -> None:
    print(f"clarisql serve: {message} ({time.monotonic() - t0:.1f} s)", flush=True)


def _serve(args: argparse.Namespace) -> int:
    from clarisql.cli import UserError

    t0 = time.monotonic()
    if args.idle_timeout < 0:
        raise UserError(
            f"--idle-timeout must be >= 0 seconds (0: never), got {args.idle_timeout:g}"
        )
    env_kwargs = _env_args(args.env_arg)
    if args.rewards:
        env_kwargs["reward"] = args.rewards
    try:
        config = _config(args, env_kwargs)
    except ValueError as e:  # checked before the suite is loaded or a port opened
        raise UserError(f"clarisql serve: {e}") from e
    print("clarisql serve: loading the server (openenv-core, fastapi) ...", flush=True)
    try:
        app_mod = _import_server()
        import uvicorn
    except ImportError as e:
        raise UserError(
            f"clarisql serve needs the serve extra (pip install 'clarisql[serve]'): {e}"
        ) from e
    _say(f"loading suite {config.suite!r} ...", t0)
    try:
        app = app_mod.make_app(config)
    except (KeyError, ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from e
    _say(f"suite {config.suite!r} loaded; starting on http://{config.host}:{config.port}", t0)
    server = uvicorn.Server(uvicorn.Config(app, **app_mod.uvicorn_options(config)))

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            _say(f"ready on http://{config.host}:{config.port} (OpenEnv /ws, /sessions)", t0)

    threading.Thread(target=announce, daemon=True, name="clarisql-serve-ready").start()
    try:
        server.run()
    except OSError as e:  # (the port is taken, or not ours to bind)
        raise UserError(f"clarisql serve: cannot listen on {config.host}:{config.port}: {e}") from e
    if not server.started:
        raise UserError(f"the server could not start on {config.host}:{config.port}")
    return 0


def _config(args: argparse.Namespace, env_kwargs: dict):
    from clarisql.envs.server.config import ServeConfig

    return ServeConfig(
        suite=args.suite,
        suite_kwargs={"data": args.data} if args.data else {},
        env_kwargs=env_kwargs,
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout or None,
        ws_compression=args.ws_compression,
        inline_slice_ms=args.inline_slice_ms,
        max_message_bytes=args.max_message_bytes,
        memory_budget_mb=args.memory_budget_mb,
    )
