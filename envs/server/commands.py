"""``clarisql serve``: the environment as an OpenEnv-compatible server (thin shell over ``serve``)."""

from __future__ import annotations

import argparse
import json


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

    try:
        from clarisql.envs.server.app import serve
    except ImportError as e:
        raise UserError(
            f"clarisql serve needs the serve extra (pip install 'clarisql[serve]'): {e}"
        ) from e
    from clarisql.envs.server.config import ServeConfig

    env_kwargs = _env_args(args.env_arg)
    if args.rewards:
        env_kwargs["reward"] = args.rewards
    config = ServeConfig(
        suite=args.suite,
        suite_kwargs={"data": args.data} if args.data else {},
        env_kwargs=env_kwargs,
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout or None,
        ws_compression=args.ws_compression,
        inline_slice_ms=args.inline_slice_ms,
    )
    print(
        f"clarisql serve: suite {config.suite!r} on http://{config.host}:{config.port}", flush=True
    )
    try:
        serve(config)
    except (KeyError, ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from e
    return 0
