"""Run a training config end to end: split, (tiny model), SFT warm start, SFT/GRPO/PPO, evaluation.

Output folder layout (``output_dir``)::

    config.yaml        the resolved config
    splits.json        train and held-out task ids
    base/              the tiny model + tokenizer (tiny recipes only)
    sft/               the SFT warm-start checkpoint (merged), when ``warm_start`` is set
    final/             the trained checkpoint: ``clarisql eval --policy hf:OUTPUT_DIR/final``
    trainer/           TRL/Accelerate trainer output and tracker logs (TensorBoard when installed)
    eval.json          held-out evaluation of final/ (hf: policy, run_episode)
    summary.json       what ran, where the checkpoint is, the evaluation numbers, timings
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from clarisql.envs.suites import Suite
from clarisql.policies.hf import ChatFormat
from clarisql.training.common import (
    chat_format,
    evaluate_batched,
    load_model,
    load_run_suite,
    log,
    lora_config,
    make_env,
    model_source,
    resolve_report_to,
    save_checkpoint,
    write_json,
)
from clarisql.training.config import TrainConfig, save_config
from clarisql.training.data import (
    grpo_prompts,
    interleave,
    oracle_conversations,
    sft_dataset,
    split_tasks,
)
from clarisql.training.progress import Phases, step_progress


def _precision_defaults() -> dict[str, Any]:
    import torch

    cuda = torch.cuda.is_available()
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    # TRL defaults to bf16 and activation checkpointing: right on a GPU, only slower on a CPU
    return {"bf16": bf16, "fp16": False, "gradient_checkpointing": cuda}


def _save_log_history(trainer: Any, path: Path) -> None:
    if _is_main():
        write_json(path, trainer.state.log_history)


def _is_main() -> bool:
    from accelerate import PartialState

    return PartialState().is_main_process


def _wait() -> None:
    from accelerate import PartialState

    PartialState().wait_for_everyone()


def _save_trained(trainer: Any, tok: Any, fmt: ChatFormat, out: Path, *, merge_lora: bool) -> Path:
    """Save a TRL trainer's model as an ``hf:`` checkpoint. ``trainer.save_model`` runs on every
    process (DeepSpeed/FSDP gather sharded weights there); merging a LoRA adapter happens on the
    main process (not supported with ZeRO-3-partitioned weights)."""
    model = trainer.model
    if merge_lora and hasattr(model, "merge_and_unload"):
        if _is_main():
            save_checkpoint(model, tok, fmt, out, merge_lora=True)
    else:
        trainer.save_model(str(out))
        if _is_main():
            tok.save_pretrained(out)
            fmt.save(out)
    _wait()
    return out


def _trl_args(cls: type, values: Mapping[str, Any], where: str) -> Any:
    try:
        return cls(**values)
    except TypeError as e:
        raise ValueError(f"{where}: {e}") from None


def sft_stage(
    cfg: TrainConfig,
    suite: Suite,
    fmt: ChatFormat,
    source: str,
    train_ids: Sequence[str],
    sft_args: Mapping[str, Any],
    out: Path,
    report_to: list[str],
    *,
    merge_lora: bool = True,
    label: str = "SFT",
) -> Path:
    """SFT (TRL ``SFTTrainer``) on the oracle's trajectories of ``train_ids``; returns the checkpoint."""
    from trl import SFTConfig, SFTTrainer

    model, tok = load_model(cfg, source)
    env = make_env(cfg, suite)
    convs = oracle_conversations(
        env, train_ids, fmt, policy=cfg.data.sft_policy, seed=cfg.seed, progress=True
    )
    env.close()
    args = dict(sft_args)
    max_length = args.get("max_length")
    ds = sft_dataset(tok, convs, fmt, max_length=max_length)
    log.info("SFT: %d oracle conversations (%d kept), %s", len(convs), len(ds), out)
    values = {
        "output_dir": str(out.parent / "trainer" / out.name),
        "report_to": report_to or "none",
        "seed": cfg.seed,
        "save_strategy": "no",
        "logging_steps": 1,
        "max_length": None,
        **_precision_defaults(),
        **args,
    }
    trainer = SFTTrainer(
        model=model,
        args=_trl_args(SFTConfig, values, "sft"),
        train_dataset=ds,
        processing_class=tok,
        peft_config=lora_config(cfg),
        callbacks=[step_progress(label)],
    )
    trainer.train()
    _save_log_history(trainer, Path(values["output_dir"]) / "log_history.json")
    return _save_trained(trainer, tok, fmt, out, merge_lora=merge_lora)


def grpo_stage(
    cfg: TrainConfig,
    suite: Suite,
    fmt: ChatFormat,
    source: str,
    train_ids: Sequence[str],
    out: Path,
    report_to: list[str],
) -> Path:
    """GRPO through TRL's ``GRPOTrainer(environment_factory=ClarifySQLToolEnv)``; returns the checkpoint."""
    from trl import GRPOConfig, GRPOTrainer

    from clarisql.training.env_adapter import ClarifySQLToolEnv, episode_stats_reward

    if not fmt.tools:
        raise ValueError(
            "GRPO with environment_factory needs format.tools: true (TRL drives the env through tool calls)"
        )
    model, tok = load_model(cfg, source)
    env = make_env(cfg, suite)
    dataset = grpo_prompts(env, train_ids, fmt)
    env.close()
    factory = partial(
        ClarifySQLToolEnv, suite, reward=cfg.env.reward, env_kwargs=cfg.env.env_kwargs()
    )
    values: dict[str, Any] = {
        "output_dir": str(out.parent / "trainer" / "grpo"),
        "report_to": report_to or "none",
        "seed": cfg.seed,
        "save_strategy": "no",
        "logging_steps": 1,
        # every turn is one tool call; the env truncates at max_turns anyway
        "max_tool_calling_iterations": cfg.env.max_turns,
        **_precision_defaults(),
        **cfg.grpo,  # type: ignore[attr-defined]
    }
    values.setdefault(
        "reward_weights", [0.0]
    )  # episode_stats_reward only logs; the env's get_reward is the reward
    if fmt.chat_template_kwargs:
        values.setdefault("chat_template_kwargs", dict(fmt.chat_template_kwargs))
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[episode_stats_reward],
        args=_trl_args(GRPOConfig, values, "grpo"),
        train_dataset=dataset,
        processing_class=tok,
        peft_config=lora_config(cfg),
        environment_factory=factory,
        callbacks=[step_progress("GRPO")],
    )
    trainer.train()
    _save_log_history(trainer, Path(values["output_dir"]) / "log_history.json")
    return _save_trained(trainer, tok, fmt, out, merge_lora=cfg.model.merge_lora)


def ppo_stage(
    cfg: TrainConfig,
    suite: Suite,
    fmt: ChatFormat,
    source: str,
    train_ids: Sequence[str],
    out: Path,
    report_to: list[str],
) -> Path:
    """Multi-turn PPO (:class:`MultiTurnPPOTrainer`); returns the checkpoint."""
    from clarisql.training.ppo import MultiTurnPPOTrainer, PPOConfig

    model, tok = load_model(cfg, source)
    pcfg = PPOConfig.from_dict({"seed": cfg.seed, **cfg.ppo})  # type: ignore[attr-defined]
    trainer = MultiTurnPPOTrainer(
        model,
        tok,
        fmt,
        partial(make_env, cfg, suite),
        train_ids,
        pcfg,
        out.parent / "trainer" / "ppo",
        peft_config=lora_config(cfg),
        report_to=report_to,
        merge_lora=cfg.model.merge_lora,
    )
    trainer.train(
        on_step=lambda s, st: log.info(
            "ppo step %d: reward %.3f kl %.4f", s, st["reward"], st["kl"]
        )
    )
    return trainer.save(out)


def train(cfg: TrainConfig) -> dict[str, Any]:
    """Run ``cfg`` (see the module docstring for what lands where); returns the summary."""
    from clarisql.training.validate import validate_config

    t_start = time.perf_counter()
    validate_config(cfg)  # a typo fails here, not after the warm start
    if cfg.torch_threads is not None:
        import torch

        torch.set_num_threads(cfg.torch_threads)
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    main = _is_main()
    if main:
        save_config(cfg, out / "config.yaml")
    suite = load_run_suite(cfg)
    fmt = chat_format(cfg)
    report_to = resolve_report_to(cfg.report_to)
    train_ids, eval_ids = split_tasks(
        suite, cfg.data.eval_fraction, cfg.data.split_seed, categories=cfg.data.categories
    )
    if cfg.data.max_train_tasks is not None:
        train_ids = interleave(train_ids, suite, cfg.data.split_seed)[: cfg.data.max_train_tasks]
    if not train_ids:
        raise ValueError("no training tasks (check data.categories / data.max_train_tasks)")
    if main:
        write_json(out / "splits.json", {"train": train_ids, "eval": eval_ids})
    timings: dict[str, float] = {}
    warm = getattr(cfg, "warm_start", None) if cfg.trainer != "sft" else None
    names = ["model"]
    names += ["SFT"] if cfg.trainer == "sft" else (["SFT warm start"] if warm is not None else [])
    names += [] if cfg.trainer == "sft" else [cfg.trainer.upper()]
    names += ["held-out eval"] if cfg.eval.enabled and eval_ids else []
    phases = Phases(names)
    log.info(
        "%s run: %d training tasks, %d held out, output %s",
        cfg.trainer,
        len(train_ids),
        len(eval_ids),
        out,
    )
    t = time.perf_counter()
    phases.start("model", "build the tiny model" if cfg.model.tiny is not None else "resolve")
    if main:  # the tiny model is built once, then every process loads it
        source = model_source(cfg, suite)
    _wait()
    source = model_source(cfg, suite)
    timings["model_s"] = time.perf_counter() - t
    phases.done("model", source)
    final = out / "final"
    if cfg.trainer == "sft":
        t = time.perf_counter()
        phases.start("SFT", f"oracle trajectories of {len(train_ids)} tasks, then training")
        sft_stage(
            cfg,
            suite,
            fmt,
            source,
            train_ids,
            cfg.sft,
            final,
            report_to,
            merge_lora=cfg.model.merge_lora,
        )  # type: ignore[attr-defined]
        timings["sft_s"] = time.perf_counter() - t
        phases.done("SFT")
    else:
        if warm is not None:
            t = time.perf_counter()
            phases.start(
                "SFT warm start", f"oracle trajectories of {len(train_ids)} tasks, then training"
            )
            source = str(
                sft_stage(
                    cfg,
                    suite,
                    fmt,
                    source,
                    train_ids,
                    warm,
                    out / "sft",
                    report_to,
                    merge_lora=True,
                    label="SFT warm start",
                )
            )
            timings["sft_s"] = time.perf_counter() - t
            phases.done("SFT warm start")
        t = time.perf_counter()
        name = cfg.trainer.upper()
        phases.start(name, "trajectories collected through the environment at every step")
        stage = grpo_stage if cfg.trainer == "grpo" else ppo_stage
        stage(cfg, suite, fmt, source, train_ids, final, report_to)
        timings[f"{cfg.trainer}_s"] = time.perf_counter() - t
        phases.done(name)
    summary: dict[str, Any] = {
        "trainer": cfg.trainer,
        "checkpoint": str(final),
        "policy": f"hf:{final}",
        "n_train_tasks": len(train_ids),
        "n_eval_tasks": len(eval_ids),
        "report_to": report_to,
    }
    if not main:
        return summary
    if cfg.eval.enabled and eval_ids:
        t = time.perf_counter()
        ids = interleave(eval_ids, suite, cfg.data.split_seed)
        if cfg.eval.max_tasks is not None:
            ids = ids[: cfg.eval.max_tasks]
        from clarisql.policies import make_policy

        phases.start("held-out eval", f"{len(ids)} episodes with hf:{final}")
        policy = make_policy(
            f"hf:{final}",
            max_new_tokens=cfg.eval.max_new_tokens,
            temperature=cfg.eval.temperature,
            seed=cfg.seed,
            batch_size=cfg.eval.batch_size,
        )
        res = evaluate_batched(
            policy,
            partial(make_env, cfg, suite),
            ids,
            batch_size=cfg.eval.batch_size,
            seed=cfg.seed,
            progress=True,
        )
        write_json(out / "eval.json", res)
        summary["eval"] = {
            "n_episodes": res["n_episodes"],
            "mean_reward": res["mean_reward"],
            **{
                k: res["metrics"].get(k)
                for k in (
                    "pass@1",
                    "phi_10",
                    "abstain_rate",
                    "clarifications_per_episode",
                    "turns_per_episode",
                )
            },
        }
        timings["eval_s"] = time.perf_counter() - t
        phases.done("held-out eval", f"pass@1 {res['metrics'].get('pass@1', 0.0):.3f}")
    timings["total_s"] = time.perf_counter() - t_start
    timings["cpu_s"] = time.process_time()
    timings["phases_cpu_s"] = dict(phases.cpu_seconds)
    summary["timings"] = timings
    write_json(out / "summary.json", summary)
    return summary


__all__ = ["grpo_stage", "ppo_stage", "sft_stage", "train"]
