"""Shared pieces of the training runs: model loading, LoRA, trackers, checkpoints, evaluation."""

from __future__ import annotations

import importlib.util
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.suites import Suite, load_suite
from clarisql.policies.hf import ChatFormat, HFPolicy
from clarisql.training.config import TrainConfig

log = logging.getLogger("clarisql.training")


def resolve_report_to(value: Any) -> list[str]:
    """``"auto"``: TensorBoard when installed, else no tracker (a note is logged)."""
    if value in (None, "none", "None", False, []):
        return []
    if value == "auto":
        if importlib.util.find_spec("tensorboard") or importlib.util.find_spec("tensorboardX"):
            return ["tensorboard"]
        if importlib.util.find_spec("trackio"):
            return ["trackio"]
        log.warning(
            "report_to=auto: neither tensorboard nor trackio is installed; metrics go to the run's JSON logs only"
        )
        return []
    return [value] if isinstance(value, str) else list(value)


def chat_format(cfg: TrainConfig) -> ChatFormat:
    return ChatFormat.from_dict(cfg.format)


def load_run_suite(cfg: TrainConfig) -> Suite:
    return load_suite(cfg.env.suite, **dict(cfg.env.suite_kwargs))


def make_env(cfg: TrainConfig, suite: Suite) -> ClarifySQLEnv:
    return ClarifySQLEnv(suite, reward=cfg.env.reward, **cfg.env.env_kwargs())


def model_source(cfg: TrainConfig, suite: Suite) -> str:
    """The folder or hub id to load: builds the tiny model first when ``model.tiny`` is set."""
    if cfg.model.tiny is None:
        assert cfg.model.name_or_path is not None
        return cfg.model.name_or_path
    from clarisql.training.tiny import build_tiny

    out = Path(cfg.model.tiny_dir or Path(cfg.output_dir) / "base")
    fmt = chat_format(cfg)
    return str(
        build_tiny(out, suite, cfg.model.tiny, formats=[fmt], env_kwargs=cfg.env.env_kwargs())
    )


def load_model(cfg: TrainConfig, source: str) -> tuple[Any, Any]:
    """Model (for training, on CPU until a trainer places it) and tokenizer (left padding, pad token set)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw: dict[str, Any] = {"trust_remote_code": cfg.model.trust_remote_code}
    if cfg.model.dtype != "auto":
        kw["dtype"] = getattr(torch, cfg.model.dtype)
    else:
        kw["dtype"] = "auto"
    if cfg.model.attn_implementation:
        kw["attn_implementation"] = cfg.model.attn_implementation
    try:
        tok = AutoTokenizer.from_pretrained(source, trust_remote_code=cfg.model.trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(source, **kw)
    except OSError as e:
        raise ValueError(f"cannot load model {source!r}: {e}") from None
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model, tok


def lora_config(cfg: TrainConfig) -> Any:
    if not cfg.model.lora:
        return None
    from peft import LoraConfig

    kw = {"task_type": "CAUSAL_LM", **cfg.model.lora}
    return LoraConfig(**kw)


def save_checkpoint(
    model: Any, tokenizer: Any, fmt: ChatFormat, out: str | Path, *, merge_lora: bool = False
) -> Path:
    """Save an ``hf:``-loadable checkpoint: model (or PEFT adapter), tokenizer, chat format."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    if merge_lora and hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(d)
    tokenizer.save_pretrained(d)
    fmt.save(d)
    return d


def _eval_summary(results: list[Any]) -> dict[str, Any]:
    """Mean reward, summary metrics and a short line per episode for a list of episode results."""
    from clarisql.rollouts.metrics import records_from_results, summary_metrics

    n = max(len(results), 1)
    return {
        "n_episodes": len(results),
        "mean_reward": sum(r.reward for r in results) / n,
        "metrics": summary_metrics(records_from_results(results)),
        "episodes": [
            {
                "task_id": r.task_id,
                "category": r.category,
                "reward": r.reward,
                "correct": r.correct,
                "actions": [t.get("action") for t in r.turns],
            }
            for r in results
        ],
    }


def evaluate_checkpoint(
    path_or_policy: str | Path | HFPolicy,
    env: ClarifySQLEnv,
    task_ids: Sequence[str],
    *,
    max_new_tokens: int = 256,
    temperature: float = 0.0,
    seed: int = 0,
) -> dict[str, Any]:
    """Evaluate with ``hf:`` and :func:`run_episode`: mean reward, summary metrics, per-episode rows."""
    from clarisql.policies import make_policy
    from clarisql.rollouts.episode import run_episode

    if isinstance(path_or_policy, HFPolicy):
        policy = path_or_policy
    else:
        policy = make_policy(
            f"hf:{path_or_policy}",
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            seed=seed,
        )
    results = [run_episode(env, policy, tid, seed=seed + i) for i, tid in enumerate(task_ids)]
    return _eval_summary(results)


def evaluate_batched(
    policy: HFPolicy,
    make_env_fn: Any,
    task_ids: Sequence[str],
    *,
    batch_size: int = 8,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, Any]:
    """Like :func:`evaluate_checkpoint`, with generation batched across episodes: the rollout
    machinery's :func:`~clarisql.rollouts.episode.run_episode_batch` on ``batch_size`` envs
    (``make_env_fn()``), one :meth:`HFPolicy.act_batch` call per round. ``progress``: log each
    finished episode count (about ten lines) with the running pass rate."""
    import time

    from clarisql.rollouts.episode import run_episode_batch
    from clarisql.training.progress import report_item

    envs = [make_env_fn() for _ in range(max(1, min(batch_size, len(task_ids))))]
    results: dict[str, Any] = {}
    errors: list[str] = []
    t0 = time.perf_counter()

    def on_result(r: Any) -> None:
        if isinstance(r, tuple):
            errors.append(f"{r[0][0]}: {type(r[1]).__name__}: {r[1]}")
        else:
            results[r.task_id] = r
        if progress:
            done = len(results) + len(errors)
            ok = sum(x.correct for x in results.values())
            report_item("held-out episodes", done, len(task_ids), t0, f", pass@1 {ok / done:.2f}")

    run_episode_batch(
        envs, policy, ((tid, seed + i, 0, None) for i, tid in enumerate(task_ids)), on_result
    )
    for e in envs:
        e.close()
    if errors:
        raise RuntimeError(f"evaluation failed on {len(errors)} episode(s): {errors[0]}")
    ordered = [results[t] for t in task_ids if t in results]
    return _eval_summary(ordered)


def write_json(path: str | Path, data: Any) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return p


__all__ = [
    "chat_format",
    "evaluate_batched",
    "evaluate_checkpoint",
    "load_model",
    "load_run_suite",
    "lora_config",
    "make_env",
    "model_source",
    "resolve_report_to",
    "save_checkpoint",
    "write_json",
]
