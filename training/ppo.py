"""Compact multi-turn PPO for clarification policies, on Accelerate and PEFT.

TRL 1.x ships no PPO trainer, and no engine that provides multi-turn PPO with environment-token
masking can be installed and tested here, so this module implements PPO directly (written for this
project because no installed library does it; everything around it is library code: transformers
models and generation, PEFT adapters, Accelerate for devices, processes, mixed precision and
gradient accumulation and tracking):

- Rollouts: :func:`clarisql.training.rollout.collect_episodes` plays whole episodes in
  :class:`ClarifySQLEnv` with the current policy (batched generation) and returns token sequences
  with an agent-token mask; env/simulator tokens are never trained on.
- Policy and value: the causal LM plus a learned linear value head on its last hidden state
  (:class:`PolicyWithValue`); with LoRA only the adapter and the head train.
- Reference and KL control: per-token KL penalty ``-kl_coef * (log pi - log pi_ref)`` on agent
  tokens; the reference is the adapter-disabled base with PEFT (no second copy of the model), a
  frozen copy otherwise. With ``target_kl`` the coefficient adapts (Ziegler et al., 2019).
- Advantages: GAE over the agent's tokens only — the env's step reward sits on the last token of the
  agent turn it answered, environment tokens are skipped, so the value of a turn's last token
  bootstraps from the first token of the agent's next turn. Advantages are whitened per batch.
- Loss: clipped policy surrogate, clipped value loss, optional entropy bonus; ``ppo_epochs`` passes
  over minibatches of episodes per rollout batch.

Each process rolls out ``episodes_per_step`` episodes on its own shard of the training tasks;
gradients are averaged by Accelerate (DDP/FSDP/DeepSpeed per ``accelerate launch`` config).
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies.hf import ChatFormat, HFPolicy
from clarisql.training.config import build_dataclass
from clarisql.training.rollout import TokenEpisode, collect_episodes


@dataclass
class PPOConfig:
    """PPO hyperparameters (``ppo:`` section of a recipe)."""

    learning_rate: float = 1e-5
    max_steps: int = 100  # PPO updates; each plays episodes_per_step episodes per process
    episodes_per_step: int = 8
    ppo_epochs: int = 2
    mini_batch_size: int = 4  # episodes per forward/backward
    gradient_accumulation_steps: int = 1
    clip_range: float = 0.2
    vf_coef: float = 0.5
    vf_clip_range: float = 0.2
    gamma: float = 1.0
    lam: float = 0.95
    kl_coef: float = 0.05
    target_kl: float | None = None  # adaptive KL control when set
    kl_horizon: int = 10_000
    entropy_coef: float = 0.0
    whiten_advantages: bool = True
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 128  # per agent turn
    max_episode_tokens: int = 4096
    generation_batch_size: int = 8
    gradient_checkpointing: bool = False
    mixed_precision: str = "no"
    logging_steps: int = 1
    save_steps: int = 0  # 0: only the final checkpoint
    seed: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> PPOConfig:
        return build_dataclass(cls, d, "ppo")


class PolicyWithValue(nn.Module):
    """A causal LM (plain or PEFT) and a scalar value head on its last hidden state."""

    def __init__(self, lm: nn.Module):
        super().__init__()
        self.lm = lm
        cfg = lm.config.get_text_config() if hasattr(lm.config, "get_text_config") else lm.config
        self.v_head = nn.Linear(cfg.hidden_size, 1)
        nn.init.normal_(self.v_head.weight, std=1.0 / math.sqrt(cfg.hidden_size + 1))
        nn.init.zeros_(self.v_head.bias)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.lm(
            input_ids=input_ids,
            attention_mask=attention_mask,
            output_hidden_states=True,
            use_cache=False,
        )
        hidden = out.hidden_states[-1]
        values = self.v_head(hidden.to(self.v_head.weight.dtype)).squeeze(-1)
        return out.logits, values


def token_logprobs(
    logits: torch.Tensor, input_ids: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """log p(token_t | <t) for t >= 1, shape [B, T-1] (logits of position t-1 predict token t)."""
    logits = logits[:, :-1].float() / temperature
    return torch.gather(
        torch.log_softmax(logits, dim=-1), 2, input_ids[:, 1:].unsqueeze(-1)
    ).squeeze(-1)


def gae_agent_tokens(
    rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE over the masked (agent) positions of each row only; other positions get 0.

    ``rewards``, ``values``, ``mask``: [B, T]. Unmasked positions (prompt, env tokens, padding)
    are skipped: the next value of an agent token is the value at the next *agent* token of the
    same row, and 0 after the row's last one (the episode has ended). Returns (advantages, returns).
    """
    adv = torch.zeros_like(values)
    for b in range(values.shape[0]):
        idx = torch.nonzero(mask[b], as_tuple=False).squeeze(-1)
        if idx.numel() == 0:
            continue
        r, v = rewards[b, idx], values[b, idx]
        nxt = torch.cat([v[1:], v.new_zeros(1)])
        delta = r + gamma * nxt - v
        a = torch.zeros_like(v)
        running = v.new_zeros(())
        for k in range(idx.numel() - 1, -1, -1):
            running = delta[k] + gamma * lam * running
            a[k] = running
        adv[b, idx] = a
    return adv, adv + values


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


def masked_whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    mean = masked_mean(x, mask)
    var = masked_mean((x - mean) ** 2, mask)
    return (x - mean) * torch.rsqrt(var + eps) * mask


class AdaptiveKL:
    """Ziegler et al. (2019) adaptive KL coefficient; fixed when ``target`` is None."""

    def __init__(self, init: float, target: float | None, horizon: int):
        self.value, self.target, self.horizon = init, target, horizon

    def update(self, kl: float, n: int) -> None:
        if self.target is None:
            return
        err = max(-0.2, min(0.2, kl / self.target - 1.0))
        self.value *= 1.0 + err * n / self.horizon


def _pad(seqs: Sequence[Sequence[float]], value: float, dtype: torch.dtype) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), value, dtype=dtype)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(list(s), dtype=dtype)
    return out


class MultiTurnPPOTrainer:
    """PPO over whole ClarifySQLEnv episodes (see the module docstring).

    Args:
        model: a causal LM (``transformers``); wrapped with LoRA when ``peft_config`` is given.
        tokenizer: its tokenizer (chat template with tool calls for ``fmt.tools``).
        fmt: the chat format (saved with checkpoints so ``hf:`` evaluates in the same format).
        env_factory: makes one :class:`ClarifySQLEnv` (called ``episodes_per_step`` times).
        train_task_ids: the tasks episodes are drawn from.
        config: :class:`PPOConfig`.
        output_dir: checkpoints, ``ppo_log.jsonl`` and tracker logs.
        report_to: Accelerate tracker names (``"tensorboard"``, ...) or ``None``.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        fmt: ChatFormat,
        env_factory: Callable[[], ClarifySQLEnv],
        train_task_ids: Sequence[str],
        config: PPOConfig,
        output_dir: str | Path,
        *,
        peft_config: Any = None,
        report_to: Sequence[str] | None = None,
        merge_lora: bool = False,
    ):
        from accelerate import Accelerator
        from accelerate.utils import set_seed

        if not train_task_ids:
            raise ValueError("PPO needs at least one training task")
        self.cfg = config
        self.out = Path(output_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.accelerator = Accelerator(
            gradient_accumulation_steps=config.gradient_accumulation_steps,
            mixed_precision=config.mixed_precision,
            log_with=list(report_to) if report_to else None,
            project_dir=str(self.out),
        )
        set_seed(config.seed + self.accelerator.process_index)
        self.tokenizer = tokenizer
        self.fmt = fmt
        self.merge_lora = merge_lora
        if config.gradient_checkpointing:
            model.gradient_checkpointing_enable()
            model.config.use_cache = False
        self.is_peft = peft_config is not None
        if self.is_peft:
            from peft import get_peft_model

            model = get_peft_model(model, peft_config)
            self.ref_model = None
        else:
            self.ref_model = copy.deepcopy(model).eval()
            for p in self.ref_model.parameters():
                p.requires_grad_(False)
        self.policy = PolicyWithValue(model)
        params = [p for p in self.policy.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            params, lr=config.learning_rate, weight_decay=config.weight_decay
        )
        self.policy, self.optimizer = self.accelerator.prepare(self.policy, self.optimizer)
        if self.ref_model is not None:
            self.ref_model.to(self.accelerator.device)
        self.kl = AdaptiveKL(config.kl_coef, config.target_kl, config.kl_horizon)
        self.envs = [env_factory() for _ in range(config.episodes_per_step)]
        shard = list(train_task_ids)[
            self.accelerator.process_index :: self.accelerator.num_processes
        ] or list(train_task_ids)
        self._tasks = shard
        self._rng = random.Random(config.seed * 1000 + self.accelerator.process_index)
        self._queue: list[str] = []
        self._episode_seed = config.seed * 100_000 + self.accelerator.process_index * 10_000
        self.history: list[dict[str, float]] = []
        if report_to:
            self.accelerator.init_trackers("clarisql-ppo", config=_flat(asdict(config)))

    # --- helpers ------------------------------------------------------------------------------
    def _unwrapped(self) -> PolicyWithValue:
        return self.accelerator.unwrap_model(self.policy)

    def _sampler(self) -> HFPolicy:
        c = self.cfg
        return HFPolicy(
            "ppo-rollout",
            model=self._unwrapped().lm,
            tokenizer=self.tokenizer,
            format=self.fmt,
            max_new_tokens=c.max_new_tokens,
            temperature=c.temperature,
            top_p=c.top_p,
            top_k=c.top_k,
            batch_size=c.generation_batch_size,
            seed=self._rng.randrange(2**31),
        )

    def _next_tasks(self, n: int) -> list[str]:
        out = []
        while len(out) < n:
            if not self._queue:
                self._queue = list(self._tasks)
                self._rng.shuffle(self._queue)
            out.append(self._queue.pop())
        return out

    def rollout(self) -> list[TokenEpisode]:
        tasks = self._next_tasks(len(self.envs))
        seeds = list(range(self._episode_seed, self._episode_seed + len(tasks)))
        self._episode_seed += len(tasks)
        lm = self._unwrapped().lm
        was_training = lm.training
        lm.eval()
        try:
            return collect_episodes(
                self._sampler(),
                self.envs,
                tasks,
                seeds=seeds,
                max_episode_tokens=self.cfg.max_episode_tokens,
            )
        finally:
            lm.train(was_training)

    @torch.no_grad()
    def _score(
        self, batch: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Old log-probs, values and reference log-probs of a padded batch ([B, T-1] each)."""
        T = self.cfg.temperature
        logits, values = self.policy(batch["input_ids"], batch["attention_mask"])
        old_lp = token_logprobs(logits, batch["input_ids"], T)
        if self.is_peft:
            with self._unwrapped().lm.disable_adapter():
                ref_logits = (
                    self._unwrapped()
                    .lm(
                        input_ids=batch["input_ids"],
                        attention_mask=batch["attention_mask"],
                        use_cache=False,
                    )
                    .logits
                )
        else:
            ref_logits = self.ref_model(
                input_ids=batch["input_ids"],
                attention_mask=batch["attention_mask"],
                use_cache=False,
            ).logits
        ref_lp = token_logprobs(ref_logits, batch["input_ids"], T)
        return old_lp, values[:, :-1].float(), ref_lp

    def _batch(self, eps: Sequence[TokenEpisode]) -> dict[str, torch.Tensor]:
        dev = self.accelerator.device
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        return {
            "input_ids": _pad([e.input_ids for e in eps], pad, torch.long).to(dev),
            "attention_mask": _pad([[1] * len(e.input_ids) for e in eps], 0, torch.long).to(dev),
            # shifted by one: position t-1 of these holds token t's mask / reward
            "mask": _pad([e.action_mask[1:] for e in eps], 0, torch.float32).to(dev),
            "env_rewards": _pad([e.token_rewards[1:] for e in eps], 0.0, torch.float32).to(dev),
        }

    # --- one PPO step ---------------------------------------------------------------------------
    def step(self, episodes: Sequence[TokenEpisode]) -> dict[str, float]:
        c = self.cfg
        mb = max(1, c.mini_batch_size)
        self.policy.eval()
        chunks = []
        for s in range(0, len(episodes), mb):
            eps = episodes[s : s + mb]
            batch = self._batch(eps)
            old_lp, values, ref_lp = self._score(batch)
            m = batch["mask"]
            kl_tok = (old_lp - ref_lp) * m
            rewards = batch["env_rewards"] - self.kl.value * kl_tok
            adv, ret = gae_agent_tokens(rewards, values * m, m, c.gamma, c.lam)
            chunks.append(
                {
                    **batch,
                    "old_lp": old_lp,
                    "values": values,
                    "adv": adv,
                    "ret": ret,
                    "kl_tok": kl_tok,
                }
            )
        if c.whiten_advantages:  # whiten over every agent token of the batch
            all_adv = torch.cat([ch["adv"][ch["mask"] > 0] for ch in chunks])
            mean, std = (
                all_adv.mean(),
                all_adv.std(unbiased=False) if all_adv.numel() > 1 else all_adv.new_tensor(1.0),
            )
            for ch in chunks:
                ch["adv"] = (ch["adv"] - mean) / (std + 1e-8) * ch["mask"]
        n_tok = sum(float(ch["mask"].sum()) for ch in chunks)
        mean_kl = sum(float(ch["kl_tok"].sum()) for ch in chunks) / max(n_tok, 1.0)

        self.policy.train()
        stats: dict[str, list[float]] = {
            "pg_loss": [],
            "vf_loss": [],
            "clipfrac": [],
            "approx_kl": [],
            "entropy": [],
            "vf_clipfrac": [],
        }
        for _ in range(c.ppo_epochs):
            order = list(range(len(chunks)))
            self._rng.shuffle(order)
            for k in order:
                ch = chunks[k]
                with self.accelerator.accumulate(self.policy):
                    logits, values = self.policy(ch["input_ids"], ch["attention_mask"])
                    m = ch["mask"]
                    lp = token_logprobs(logits, ch["input_ids"], c.temperature)
                    v = values[:, :-1].float()
                    ratio = torch.exp(lp - ch["old_lp"])
                    pg1 = -ch["adv"] * ratio
                    pg2 = -ch["adv"] * torch.clamp(ratio, 1 - c.clip_range, 1 + c.clip_range)
                    pg_loss = masked_mean(torch.max(pg1, pg2), m)
                    v_clip = ch["values"] + torch.clamp(
                        v - ch["values"], -c.vf_clip_range, c.vf_clip_range
                    )
                    vf1, vf2 = (v - ch["ret"]) ** 2, (v_clip - ch["ret"]) ** 2
                    vf_loss = 0.5 * masked_mean(torch.max(vf1, vf2), m)
                    loss = pg_loss + c.vf_coef * vf_loss
                    ent = None
                    if c.entropy_coef:
                        logp_all = torch.log_softmax(logits[:, :-1].float() / c.temperature, dim=-1)
                        ent = masked_mean(-(logp_all.exp() * logp_all).sum(-1), m)
                        loss = loss - c.entropy_coef * ent
                    self.accelerator.backward(loss)
                    if self.accelerator.sync_gradients and c.max_grad_norm:
                        self.accelerator.clip_grad_norm_(self.policy.parameters(), c.max_grad_norm)
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                with torch.no_grad():
                    stats["pg_loss"].append(float(pg_loss))
                    stats["vf_loss"].append(float(vf_loss))
                    stats["clipfrac"].append(
                        float(masked_mean(((ratio - 1).abs() > c.clip_range).float(), m))
                    )
                    stats["vf_clipfrac"].append(float(masked_mean((vf2 > vf1).float(), m)))
                    stats["approx_kl"].append(float(masked_mean(0.5 * (lp - ch["old_lp"]) ** 2, m)))
                    if ent is not None:
                        stats["entropy"].append(float(ent))
        self.kl.update(mean_kl, len(episodes) * self.accelerator.num_processes)
        out = {k: sum(v) / len(v) for k, v in stats.items() if v}
        out.update(kl=mean_kl, kl_coef=self.kl.value, agent_tokens=n_tok / max(len(episodes), 1))
        return out

    def train(
        self, on_step: Callable[[int, dict[str, float]], None] | None = None
    ) -> list[dict[str, float]]:
        """Run ``max_steps`` rollout+update steps; log and checkpoint; returns the per-step logs."""
        c = self.cfg
        log_path = self.out / "ppo_log.jsonl"
        for step in range(1, c.max_steps + 1):
            t0 = time.perf_counter()
            episodes = self.rollout()
            t1 = time.perf_counter()
            stats = self.step(episodes)
            ep_stats = (
                self.accelerator.gather_for_metrics(
                    torch.tensor(
                        [
                            [
                                e.reward,
                                float(e.correct),
                                float(e.turns),
                                float(e.ended_by == "length"),
                            ]
                            for e in episodes
                        ],
                        device=self.accelerator.device,
                    )
                )
                .float()
                .mean(0)
                .tolist()
            )
            stats.update(
                step=step,
                reward=ep_stats[0],
                correct=ep_stats[1],
                turns=ep_stats[2],
                ended_by_length=ep_stats[3],
                rollout_s=t1 - t0,
                update_s=time.perf_counter() - t1,
            )
            self.history.append(stats)
            if self.accelerator.is_main_process and (
                step % max(1, c.logging_steps) == 0 or step == c.max_steps
            ):
                self.accelerator.log(
                    {f"ppo/{k}": v for k, v in stats.items() if k != "step"}, step=step
                )
                with log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(stats) + "\n")
            if on_step is not None:
                on_step(step, stats)
            if c.save_steps and step % c.save_steps == 0 and step != c.max_steps:
                self.save(self.out / f"checkpoint-{step}")
        self.accelerator.end_training()
        return self.history

    def save(self, directory: str | Path) -> Path:
        """Write an ``hf:``-loadable checkpoint (model or adapter, tokenizer, chat format, value head)."""
        d = Path(directory)
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            d.mkdir(parents=True, exist_ok=True)
            pv = self._unwrapped()
            lm = pv.lm
            if self.is_peft and self.merge_lora:
                lm = copy.deepcopy(lm).merge_and_unload()
            lm.save_pretrained(d)
            self.tokenizer.save_pretrained(d)
            self.fmt.save(d)
            torch.save(pv.v_head.state_dict(), d / "value_head.pt")
            (d / "ppo_config.json").write_text(
                json.dumps(asdict(self.cfg), indent=2) + "\n", encoding="utf-8"
            )
        self.accelerator.wait_for_everyone()
        return d


def _flat(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in d.items()}


__all__ = [
    "AdaptiveKL",
    "MultiTurnPPOTrainer",
    "PPOConfig",
    "PolicyWithValue",
    "gae_agent_tokens",
    "token_logprobs",
]
