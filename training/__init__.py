"""Fine-tuning clarification policies: SFT warm start, GRPO (TRL), multi-turn PPO (needs the
``train`` extra: torch, transformers, trl, peft, accelerate, datasets).

Entry points: ``clarisql train --config RECIPE [key=value ...]`` (:mod:`.commands`),
:func:`clarisql.training.run.train` with a config from :func:`clarisql.training.config.load_config`.
See ``training/README.md``. Importing this package imports no torch; the submodules that train do.
"""
