"""``clarisql train --config FILE [key=value ...]``.

``FILE`` is a YAML recipe or the name of one in ``configs/train`` (``tiny-cpu-grpo``); each
``key=value`` overrides a (dotted) key with a YAML value, e.g. ``grpo.max_steps=20
output_dir=runs/x model.lora=null``. The whole config is validated first
(:func:`clarisql.training.validate.validate_config`): a typo in any section, ``grpo.*`` included,
fails at once, also with ``--print-config`` (which then shows the resolved config and exits).
Multi-GPU: ``accelerate launch --config_file configs/accelerate/ddp.yaml -m clarisql train ...``.

This module imports nothing heavy at import time (the CLI lists it on every start); torch and TRL
load when the command runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys


def _train(args: argparse.Namespace) -> int:
    import yaml

    from clarisql.training.config import load_config
    from clarisql.training.validate import validate_config

    # the whole config is checked before anything runs (TRL sections by TRL's own classes)
    cfg = validate_config(load_config(args.config, args.overrides))
    if args.print_config:
        print(yaml.safe_dump(cfg.to_dict(), sort_keys=False), end="")
        return 0
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr
    )
    try:
        import torch  # noqa: F401
        import trl  # noqa: F401
    except ImportError as e:
        print(
            f"clarisql train: needs the train extra ({e.name} missing): pip install 'clarisql[train]'",
            file=sys.stderr,
        )
        return 2
    from clarisql.training.run import train

    summary = train(cfg)
    print(json.dumps(summary, indent=2, default=str))
    return 0


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Register ``train`` on the ``clarisql`` CLI."""
    p = subparsers.add_parser(
        "train",
        help="fine-tune a policy with SFT, GRPO (TRL) or multi-turn PPO from a YAML recipe",
        description="Fine-tune a policy with SFT, GRPO (TRL) or multi-turn PPO from a YAML recipe.",
        epilog="KEY=VALUE arguments override (dotted) config keys with YAML values.\n\n"
        "examples:\n"
        "  clarisql train --config tiny-cpu-grpo\n"
        "  clarisql train --config tiny-cpu-ppo ppo.max_steps=20 output_dir=runs/x\n"
        "  clarisql train --config grpo-qwen2.5-0.5b --print-config\n"
        "  accelerate launch --config_file configs/accelerate/ddp.yaml -m clarisql train "
        "--config grpo-multi-gpu",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        required=True,
        metavar="NAME_OR_FILE",
        help="YAML recipe, or a name from configs/train (e.g. tiny-cpu-grpo)",
    )
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="override a dotted config key with a YAML value",
    )
    p.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    p.set_defaults(func=_train)


__all__ = ["add_commands"]
