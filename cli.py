"""The ``clarisql`` command line.

Subcommands mirror the API: ``demo`` (baselines on the built-in suite), ``play`` (drive an
episode yourself); ``eval``, ``view``, ``rescore``, ``ablate`` come from
:mod:`clarisql.rollouts.commands` and ``train`` from :mod:`clarisql.training.commands`. Each
command module exposes ``add_commands(subparsers)``; the handlers get the parsed arguments and
return an exit status. Errors the user can fix (missing files, bad specs) print one line and
exit with status 2, not a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

COMMAND_MODULES = (
    "clarisql.rollouts.commands",
    "clarisql.training.commands",
    "clarisql.envs.server.commands",
    "clarisql.rollouts.export_commands",
    "clarisql.envs.synth.commands",
    "clarisql.envs.importers.commands",
)
DEMO_POLICIES = ("oracle", "answer-without-clarifying", "abstain-all", "random")


class UserError(Exception):
    """An error in what the user asked for; printed without a traceback."""


def _demo(args: argparse.Namespace) -> int:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from tqdm import tqdm

    from clarisql.envs.env import ClarifySQLEnv
    from clarisql.policies import make_policy
    from clarisql.rollouts.episode import run_episode
    from clarisql.rollouts.metrics import records_from_results, summary_metrics

    env = ClarifySQLEnv("builtin", suite_kwargs={"seed": args.seed}, reward=args.rewards)
    tasks = env.suite.tasks[: args.max_episodes] if args.max_episodes else env.suite.tasks
    # a borderless table fits an 80-column terminal (rich's width when output is not a terminal)
    table = Table(
        title=f"clarisql demo: built-in suite, {len(tasks)} tasks",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("policy", no_wrap=True)
    for col in ("Pass@1", "φ_0", "φ_10", "ask/ep", "turns/ep", "reward"):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    for name in args.policies:
        policy = make_policy(name)
        results = []
        bar = tqdm(tasks, desc=f"{name:>26}", unit="ep", leave=True, mininterval=0.5)
        for i, task in enumerate(bar):
            results.append(run_episode(env, policy, task.id, seed=args.seed + i))
            if i % 20 == 0 or i == len(tasks) - 1:
                bar.set_postfix(
                    {"pass@1": f"{sum(r.correct for r in results) / len(results):.3f}"},
                    refresh=False,
                )
        m = summary_metrics(records_from_results(results))
        table.add_row(
            name,
            f"{m['pass@1']:.3f}",
            f"{m['phi_0']:.3f}",
            f"{m['phi_10']:.3f}",
            f"{m['clarifications_per_episode']:.2f}",
            f"{m['turns_per_episode']:.2f}",
            f"{sum(r.reward for r in results) / len(results):.3f}",
        )
    env.close()
    Console().print(table)
    return 0


def _play(args: argparse.Namespace) -> int:
    from clarisql.envs.actions import ACTION_FORMAT_HELP
    from clarisql.envs.env import ClarifySQLEnv

    env = ClarifySQLEnv(args.suite, reward=args.rewards)
    options = {"task_id": args.task} if args.task else None
    obs, info = env.reset(seed=args.seed, options=options)
    print(f"Task {info['task_id']}{' (may write)' if info['writable'] else ''}")
    if args.show_schema:
        print(obs["schema"])
    print(
        "Type an action: sql <statement> | ask <question> [|| label; label] | abstain [reason] | stop [sql] |"
    )
    print(
        "raw <tool-call text or JSON> | schema | help | quit. Labels: intent  or  content,slot,kind"
    )
    print(f"\nUser: {obs['last']}")
    total = 0.0
    while True:
        try:
            line = input("> ").strip()
        except EOFError:
            print()
            return 0
        if not line:
            continue
        cmd, _, rest = line.partition(" ")
        cmd = cmd.lower()
        action: Any
        if cmd in ("quit", "exit"):
            return 0
        if cmd == "help":
            print(ACTION_FORMAT_HELP)
            continue
        if cmd == "schema":
            print(obs["schema"])
            continue
        if cmd == "sql":
            action = {"type": "execute", "sql": rest}
        elif cmd == "ask":
            question, _, labels = rest.partition("||")
            parsed = []
            for lab in filter(None, (x.strip() for x in labels.split(";"))):
                parts = [p.strip() for p in lab.split(",")]
                parsed.append(parts[0] if len(parts) == 1 else parts)
            action = {"type": "clarify", "question": question.strip(), "labels": parsed}
        elif cmd == "abstain":
            action = {"type": "abstain", "reason": rest}
        elif cmd == "stop":
            action = {"type": "stop", "sql": rest or None}
        elif cmd == "raw":
            action = rest
        else:
            action = line
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        print(obs["last"])
        if info.get("reward_components"):
            print(f"  reward {reward:+.3f} {info['reward_components']}")
        if terminated or truncated:
            ep = info.get("episode", {})
            print(
                f"\nEpisode over ({'truncated' if truncated else 'terminated'}): "
                f"{'correct' if ep.get('correct') else 'not correct'}, total reward {total:+.3f}"
            )
            return 0


def build_parser() -> argparse.ArgumentParser:
    from clarisql import __version__

    parser = argparse.ArgumentParser(
        prog="clarisql",
        description="A Gymnasium environment for text-to-SQL agents that clarify, abstain and act.",
        epilog="examples:\n  clarisql demo\n  clarisql eval --suite builtin --policy oracle "
        "--out runs/oracle\n  clarisql COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"clarisql {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser(
        "demo",
        help="run the scripted baselines on the built-in suite and print metrics",
        description="Run the scripted baselines on the built-in suite and print their metrics.",
        epilog="No data, no model and no GPU needed.\n\n"
        "examples:\n"
        "  clarisql demo\n"
        "  clarisql demo --policies oracle naive "
        "--max-episodes 50",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--policies",
        nargs="+",
        default=list(DEMO_POLICIES),
        metavar="SPEC",
        help="policy specs (default: %(default)s)",
    )
    p.add_argument(
        "--max-episodes", type=int, default=None, metavar="N", help="only the first N tasks"
    )
    p.add_argument(
        "--seed", type=int, default=0, metavar="N", help="run seed (default: %(default)s)"
    )
    p.add_argument(
        "--reward",
        "--rewards",
        dest="rewards",
        default="default",
        metavar="SPEC",
        help="reward spec: preset name or YAML file (default: %(default)s)",
    )
    p.set_defaults(func=_demo)

    p = sub.add_parser(
        "play",
        help="drive an episode yourself in the terminal",
        description="Drive an episode yourself in the terminal.",
        epilog="Type actions; read the simulated user's replies, the results and the reward.\n\n"
        "examples:\n"
        "  clarisql play\n"
        "  clarisql play --task builtin/0007 --show-schema",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--suite",
        default="builtin",
        metavar="SUITE",
        help="builtin, dysql or a task file (default: builtin)",
    )
    p.add_argument(
        "--task", default=None, metavar="ID", help="task id (default: a seeded random task)"
    )
    p.add_argument(
        "--seed", type=int, default=None, metavar="N", help="seed of the task draw and episode"
    )
    p.add_argument(
        "--reward",
        "--rewards",
        dest="rewards",
        default="default",
        metavar="SPEC",
        help="reward spec: preset name or YAML file (default: %(default)s)",
    )
    p.add_argument(
        "--show-schema", action="store_true", help="print the database schema before the episode"
    )
    p.set_defaults(func=_play)

    for mod_name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as e:
            if e.name == mod_name:
                continue
            raise
        mod.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (UserError, FileNotFoundError, KeyError, ValueError) as e:
        if os.environ.get("CLARISQL_DEBUG"):
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"clarisql {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
