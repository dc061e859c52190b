"""Check a whole training config before any work starts.

:func:`validate_config` runs in ``clarisql train`` (with ``--print-config`` too) before the suite,
model or trainer is touched, so a typo anywhere fails at once with a message naming the key
instead of after an SFT warm start. It checks

- ``model.tiny`` against :class:`clarisql.training.tiny.TinySpec`, ``model.lora`` against
  ``peft.LoraConfig``'s fields, ``model.dtype``;
- ``format`` against :class:`clarisql.policies.hf.ChatFormat`, and that GRPO has ``tools: true``;
- ``env.reward`` (a reward spec name, file or mapping), ``env.gate``;
- the trainer sections: ``sft`` / ``warm_start`` against ``trl.SFTConfig``'s fields, ``grpo``
  against ``trl.GRPOConfig``'s, ``ppo`` against :class:`clarisql.training.ppo.PPOConfig`; with
  ``build=True`` (the default of ``clarisql train``) the TRL configs are also constructed with the
  values the run will use, so value errors (a batch not divisible by ``num_generations``...) fail
  here too.

Unknown keys get a "did you mean" suggestion (:func:`difflib.get_close_matches`).
"""

from __future__ import annotations

import dataclasses
import difflib
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from clarisql.training.config import ConfigError, TrainConfig

DTYPES = ("float32", "bfloat16", "float16", "auto")


def _unknown(section: str, given: Iterable[str], known: Iterable[str]) -> None:
    known = sorted(set(known))
    bad = sorted(set(given) - set(known))
    if not bad:
        return
    hints = []
    for k in bad:
        close = difflib.get_close_matches(k, known, n=1, cutoff=0.6)
        hints.append(f"{section}.{k}" + (f" (did you mean {section}.{close[0]}?)" if close else ""))
    raise ConfigError(f"unknown key(s): {', '.join(hints)}")


def _mapping(section: str, value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{section}: expected a mapping, got {type(value).__name__}")
    return value


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init}


def _trl_section(section: str, values: Mapping[str, Any], cls_name: str, build: bool) -> None:
    try:
        import trl
    except ImportError:
        return  # `clarisql train` reports the missing extra itself
    cls = getattr(trl, cls_name)
    _unknown(section, values, _fields(cls))
    if build:
        with tempfile.TemporaryDirectory(prefix="clarisql-validate-") as tmp:
            kw = {"output_dir": tmp, "report_to": "none", **values}
            if cls_name == "GRPOConfig" and "bf16" not in values:
                kw.setdefault("bf16", False)
            if cls_name == "SFTConfig" and "bf16" not in values:
                kw.setdefault("bf16", False)
            try:
                with warnings.catch_warnings():  # deprecation notes belong to the real run
                    warnings.simplefilter("ignore")
                    cls(**kw)
            except (TypeError, ValueError) as e:
                raise ConfigError(f"{section}: {e}") from None


def validate_config(cfg: TrainConfig, *, build: bool = True) -> TrainConfig:
    """Raise :class:`ConfigError` naming the first bad key or value of ``cfg``; returns ``cfg``."""
    from clarisql.policies.hf import ChatFormat
    from clarisql.training.tiny import TinySpec

    if cfg.torch_threads is not None and (
        not isinstance(cfg.torch_threads, int) or cfg.torch_threads < 1
    ):
        raise ConfigError(
            f"torch_threads must be a positive integer or null, got {cfg.torch_threads!r}"
        )
    m = cfg.model
    if m.dtype not in DTYPES:
        raise ConfigError(f"model.dtype must be one of {DTYPES}, got {m.dtype!r}")
    if m.tiny is not None:
        _unknown("model.tiny", _mapping("model.tiny", m.tiny), _fields(TinySpec))
    if m.lora:
        lora = _mapping("model.lora", m.lora)
        try:
            from peft import LoraConfig
        except ImportError:
            LoraConfig = None  # noqa: N806 - the missing extra is reported by `clarisql train`
        if LoraConfig is not None:
            _unknown("model.lora", lora, _fields(LoraConfig))
    try:
        fmt = ChatFormat.from_dict(_mapping("format", cfg.format))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"format: {e}") from None
    if cfg.trainer == "grpo" and not fmt.tools:
        raise ConfigError("format.tools must be true for GRPO (TRL drives the env by tool calls)")
    env = cfg.env
    if env.gate is not None and env.gate not in ("labels", "text", "both"):
        raise ConfigError(f"env.gate must be labels, text or both, got {env.gate!r}")
    try:
        from clarisql.rewards.spec import load_reward_spec

        load_reward_spec(env.reward)
    except ImportError:
        pass
    except (ValueError, KeyError, FileNotFoundError, TypeError) as e:
        raise ConfigError(f"env.reward: {e}") from None
    for name in ("max_turns", "max_clarifications", "max_rows_shown"):
        v = getattr(env, name)
        if not isinstance(v, int) or v < 1:
            raise ConfigError(f"env.{name} must be a positive integer, got {v!r}")
    e = cfg.eval
    if e.max_tasks is not None and (not isinstance(e.max_tasks, int) or e.max_tasks < 1):
        raise ConfigError(f"eval.max_tasks must be a positive integer or null, got {e.max_tasks!r}")
    if not isinstance(e.max_new_tokens, int) or e.max_new_tokens < 1:
        raise ConfigError(
            f"eval.max_new_tokens must be a positive integer, got {e.max_new_tokens!r}"
        )
    for section in ("sft", "warm_start"):
        values = getattr(cfg, section, None)
        if values is not None:
            _trl_section(section, _mapping(section, values), "SFTConfig", build)
    if cfg.trainer == "grpo":
        _trl_section("grpo", _mapping("grpo", getattr(cfg, "grpo", {})), "GRPOConfig", build)
    if cfg.trainer == "ppo":
        from clarisql.training.config import build_dataclass

        try:
            from clarisql.training.ppo import PPOConfig
        except ImportError:
            return cfg
        try:
            build_dataclass(PPOConfig, _mapping("ppo", getattr(cfg, "ppo", {})), "ppo")
        except TypeError as err:
            raise ConfigError(f"ppo: {err}") from None
    return cfg


__all__ = ["validate_config"]
