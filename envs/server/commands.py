"""``clarisql serve``: the environment as an OpenEnv-compatible server (thin shell over ``serve``)."""

from __future__ import annotations

import argparse
import json


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the environment over HTTP/WebSocket (OpenEnv protocol)",
        description="Serve ClarifySQLEnv episodes to remote trainers over OpenEnv's protocol.",
    )
    p.add_argument("--suite", default="builtin", help="suite name or task file (default: builtin)")
    p.add_argument("--data", default=None, help="data folder for the dysql / odutqa suites")
    p.add_argument("--rewards", default=None, help="reward spec (preset name or YAML)")
    p.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other ClarifySQLEnv keyword (VALUE parsed as JSON when it can be)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-sessions", type=int, default=2048)
    p.add_argument("--idle-timeout", type=float, default=600.0, help="seconds; 0 = never")
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
        help="take a WebSocket step that runs one read statement on the event loop when its "
        "SQL finishes within this many ms (else on a thread); 0: every step on a thread",
    )
    p.add_argument(
        "--max-message-bytes",
        type=int,
        default=1 << 20,
        help="largest WebSocket message / HTTP body taken (refused with an error past it)",
    )
    p.add_argument(
        "--memory-budget-mb",
        type=float,
        default=None,
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


def _serve(args: argparse.Namespace) -> int:
    from clarisql.cli import UserError

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
    try:
        from clarisql.envs.server.app import serve
    except ImportError as e:
        raise UserError(
            f"clarisql serve needs the serve extra (pip install 'clarisql[serve]'): {e}"
        ) from e
    print(
        f"clarisql serve: suite {config.suite!r} on http://{config.host}:{config.port}", flush=True
    )
    try:
        serve(config)
    except (KeyError, ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from e
    except OSError as e:  # (the port is taken, or not ours to bind)
        raise UserError(f"clarisql serve: cannot listen on {config.host}:{config.port}: {e}") from e
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
