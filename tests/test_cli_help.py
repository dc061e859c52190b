"""The command line follows its conventions: every subcommand has a one-line description and an
epilog with an example, every option has help, the same thing is spelled the same way in every
subcommand (metavars, ``--reward`` / ``--rewards``), and help is plain text (no RST markup).

The test walks the parser (:func:`clarisql.cli.build_parser`), so a new subcommand or option
without help fails it.
"""

from __future__ import annotations

import argparse
import re

import pytest

from clarisql.cli import build_parser

RST = re.compile(r"``|:func:|:mod:|:class:|:meth:|\.\. ")
# the same thing, one spelling: option -> the metavar it has in every subcommand
SAME_METAVAR = {
    "--seed": "N",
    "--suite": "SUITE",
    "--data": "DIR",
    "--db": "NAME",
    "--tasks-file": "FILE",
    "--max-episodes": "N",
    "--trials": "N",
    "--workers": "N",
    "--reward": "SPEC",
    "--rewards": "SPEC",
    "--policy": "SPEC",
    "--policies": "SPEC",
    "--task": "ID",
}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _walk(parser: argparse.ArgumentParser, path: str = "clarisql"):
    for name, sp in _subcommands(parser).items():
        yield f"{path} {name}", sp
        yield from _walk(sp, f"{path} {name}")


COMMANDS = list(_walk(build_parser()))


def test_the_walk_sees_every_subcommand():
    names = {p.split()[1] for p, _ in COMMANDS}
    assert {"demo", "play", "eval", "view", "rescore", "ablate", "train"} <= names
    assert len(COMMANDS) >= 7


@pytest.mark.parametrize("path,parser", COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_subcommand_and_option_is_described(path, parser):
    problems = []
    desc = (parser.description or "").strip()
    if not desc:
        problems.append("no description")
    elif "\n" in desc or len(desc) > 80:
        problems.append("description is not one line of at most 80 characters")
    if not parser.epilog or path not in parser.epilog:
        problems.append(f"no epilog example starting with {path!r}")
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = "/".join(a.option_strings) or a.dest
        if not (a.help or "").strip() or a.help == argparse.SUPPRESS:
            problems.append(f"{name}: no help")
        if a.metavar is None and not a.option_strings:
            problems.append(f"{name}: positional without a metavar")
    text = parser.format_help()
    if RST.search(text):
        problems.append(f"RST markup in help: {RST.search(text).group(0)!r}")
    assert not problems, f"{path}: " + "; ".join(problems)


def test_every_option_that_takes_a_value_names_it() -> None:
    for path, parser in COMMANDS:
        for a in parser._actions:
            takes = a.option_strings and a.nargs != 0 and not a.choices and a.type is not None
            if takes and a.type in (int, float):
                assert a.metavar, f"{path} {a.option_strings[0]}: a number option without a metavar"


def test_one_spelling_for_the_same_thing():
    seen: dict[str, set[str]] = {}
    for path, parser in COMMANDS:
        for a in parser._actions:
            for opt in a.option_strings:
                if opt in SAME_METAVAR:
                    seen.setdefault(opt, set()).add(f"{a.metavar} ({path})")
                    assert a.metavar == SAME_METAVAR[opt], f"{path} {opt}: metavar {a.metavar!r}"
            if not a.option_strings and a.dest in ("dir", "run", "runs"):
                assert a.metavar == "RUN", f"{path} {a.dest}: metavar {a.metavar!r}"
    assert "--seed" in seen and "--reward" in seen


def test_reward_is_spelled_both_ways_where_one_spec_is_taken():
    parser = build_parser()
    subs = _subcommands(parser)
    for name in ("demo", "play", "eval"):
        opts = {o for a in subs[name]._actions for o in a.option_strings}
        assert {"--reward", "--rewards"} <= opts, name
    for spelling in ("--reward", "--rewards"):
        args = parser.parse_args(
            ["eval", "--suite", "builtin", "--policy", "oracle", "--out", "x", spelling, "outcome"]
        )
        assert args.rewards == "outcome"
    args = parser.parse_args(["rescore", "runs/x", "--rewards", "default", "outcome"])
    assert args.rewards == ["default", "outcome"]
