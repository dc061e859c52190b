"""Training run configs: one dataclass per trainer, loaded from YAML with ``key=value`` overrides.

A recipe (``configs/train/*.yaml``) looks like::

    trainer: grpo                 # sft | grpo | ppo
    output_dir: runs/grpo-qwen0.5b
    model: {name_or_path: Qwen/Qwen2.5-0.5B-Instruct, dtype: bfloat16, lora: {r: 16, ...}}
    env: {suite: builtin, reward: default, max_turns: 8}
    data: {eval_fraction: 0.2}
    format: {tools: true, system: env}
    warm_start: {max_steps: 50, ...}   # SFT on oracle trajectories first (TRL SFTConfig fields)
    grpo: {learning_rate: 1.0e-6, num_generations: 8, ...}   # TRL GRPOConfig fields
    eval: {max_tasks: 40}

Overrides use dotted keys and YAML values, as TRL's YAML configs are overridden from the command
line: ``grpo.max_steps=2 model.lora=null env.max_turns=4``. Unknown keys are errors that name the
key; the trainer-specific sections (``sft``, ``grpo``, ``warm_start``) are validated by TRL's own
config classes, ``ppo`` by :class:`clarisql.training.ppo.PPOConfig`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TRAINERS = ("sft", "grpo", "ppo")


class ConfigError(ValueError):
    """A training config is malformed; the message names the key."""


@dataclass
class ModelConfig:
    """The model to train.

    - ``name_or_path``: hub id or folder (``None`` with ``tiny``: build a tiny model).
    - ``tiny``: :class:`clarisql.training.tiny.TinySpec` fields: build a random-initialised tiny
      model and a local tokenizer for the suite (in ``tiny_dir``, default ``OUTPUT_DIR/base``).
    - ``dtype``: ``float32``, ``bfloat16``, ``float16`` or ``auto``.
    - ``lora``: ``peft.LoraConfig`` fields (``null``: full fine-tuning).
    - ``merge_lora``: save the final checkpoint merged (a plain model) instead of as an adapter.
    """

    name_or_path: str | None = None
    tiny: dict[str, Any] | None = None
    tiny_dir: str | None = None
    dtype: str = "float32"
    attn_implementation: str | None = None
    trust_remote_code: bool = False
    lora: dict[str, Any] | None = None
    merge_lora: bool = False


@dataclass
class EnvConfig:
    """The environment episodes run in (:class:`ClarifySQLEnv` arguments)."""

    suite: str = "builtin"
    suite_kwargs: dict[str, Any] = field(default_factory=dict)
    reward: Any = "default"
    simulator: str | None = None
    simulator_kwargs: dict[str, Any] = field(default_factory=dict)
    simulator_backend: str | None = None  # openai:MODEL@URL or hf:PATH (dynamic, instruction)
    max_turns: int = 8
    max_clarifications: int = 5
    max_rows_shown: int = 20
    gate: str | None = None  # labels, text or both (None: the suite's / simulator's)
    # False: the full schema, as training always had (the tool adapter offers no search_tables
    # tool yet); None: the env default (on for suites with > 50 tables)
    table_search: bool | None = False

    def env_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`ClarifySQLEnv` (besides suite and reward)."""
        kw: dict[str, Any] = {
            "max_turns": self.max_turns,
            "max_clarifications": self.max_clarifications,
            "max_rows_shown": self.max_rows_shown,
        }
        if self.simulator is not None or self.simulator_kwargs or self.simulator_backend:
            kw["simulator"] = self.simulator
            kw["simulator_kwargs"] = dict(self.simulator_kwargs)
            if self.simulator_backend:
                kw["simulator_kwargs"]["backend"] = self.simulator_backend
        if self.gate is not None:
            kw["gate"] = self.gate
        if self.table_search is not None:
            kw["table_search"] = self.table_search
        return kw


@dataclass
class DataConfig:
    """Which tasks train and which are held out (:func:`clarisql.training.data.split_tasks`)."""

    eval_fraction: float = 0.2
    split_seed: int = 0
    categories: list[str] | None = None
    max_train_tasks: int | None = None
    sft_policy: str = "oracle"


@dataclass
class EvalConfig:
    """Held-out evaluation of the final checkpoint with ``hf:`` and ``run_episode``."""

    enabled: bool = True
    max_tasks: int | None = 40
    max_new_tokens: int = 256
    temperature: float = 0.0
    batch_size: int = 8


@dataclass
class TrainConfig:
    """Fields shared by every trainer."""

    trainer: str = "grpo"
    output_dir: str = "runs/clarisql"
    seed: int = 0
    report_to: Any = "auto"  # "auto": tensorboard when installed, else none
    #: torch's intra-op threads (``None``: torch's default, one per core). A tiny model gains
    #: nothing from more threads and, on a busy machine, spinning OpenMP threads cost 3x the CPU
    torch_threads: int | None = None
    model: ModelConfig = field(default_factory=ModelConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    data: DataConfig = field(default_factory=DataConfig)
    format: dict[str, Any] = field(default_factory=lambda: {"tools": True, "system": "env"})
    eval: EvalConfig = field(default_factory=EvalConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class SFTRunConfig(TrainConfig):
    """SFT on oracle trajectories; ``sft`` holds ``trl.SFTConfig`` fields."""

    trainer: str = "sft"
    sft: dict[str, Any] = field(default_factory=dict)


@dataclass
class GRPORunConfig(TrainConfig):
    """GRPO through TRL with the environment adapter; ``grpo`` holds ``trl.GRPOConfig`` fields,
    ``warm_start`` (optional) ``trl.SFTConfig`` fields for an SFT warm start."""

    trainer: str = "grpo"
    grpo: dict[str, Any] = field(default_factory=dict)
    warm_start: dict[str, Any] | None = None


@dataclass
class PPORunConfig(TrainConfig):
    """Multi-turn PPO (:mod:`clarisql.training.ppo`); ``ppo`` holds :class:`PPOConfig` fields."""

    trainer: str = "ppo"
    ppo: dict[str, Any] = field(default_factory=dict)
    warm_start: dict[str, Any] | None = None


RUN_CONFIGS: dict[str, type[TrainConfig]] = {
    "sft": SFTRunConfig,
    "grpo": GRPORunConfig,
    "ppo": PPORunConfig,
}
_NESTED = {"model": ModelConfig, "env": EnvConfig, "data": DataConfig, "eval": EvalConfig}


def build_dataclass(cls: type, data: Mapping[str, Any] | None, where: str) -> Any:
    """``cls(**data)`` for a config dataclass; :class:`ConfigError` naming ``where`` for a
    non-mapping or an unknown key. Nested sections of a run config are built the same way."""
    data = {} if data is None else data
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where or 'top level'}: expected a mapping, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(
            f"{where or 'top level'}: unknown key(s) {unknown}; known: {sorted(names)}"
        )
    kw = {}
    for k, v in data.items():
        if k in _NESTED and cls in RUN_CONFIGS.values():
            kw[k] = build_dataclass(_NESTED[k], v or {}, f"{where}.{k}" if where else k)
        else:
            kw[k] = v
    return cls(**kw)


def parse_override(item: str) -> tuple[list[str], Any]:
    """``a.b=value`` -> (["a", "b"], yaml-parsed value)."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {item!r}: expected key=value (e.g. grpo.max_steps=10)")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as e:
        raise ConfigError(f"override {item!r}: value is not valid YAML ({e})") from None
    return [p for p in key.strip().split(".")], value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Set dotted keys in a nested dict (creating mappings along the way)."""
    for item in overrides:
        path, value = parse_override(item)
        node = data
        for p in path[:-1]:
            nxt = node.get(p)
            if nxt is None:
                nxt = node[p] = {}
            if not isinstance(nxt, dict):
                raise ConfigError(f"override {item!r}: {p!r} is not a mapping")
            node = nxt
        node[path[-1]] = value
    return data


def recipe_dir() -> Path:
    """Folder of the shipped recipes (``configs/train``)."""
    return Path(__file__).resolve().parent.parent / "configs" / "train"


def resolve_config_path(spec: str | Path) -> Path:
    """A YAML path, or a recipe name from ``configs/train`` (``tiny-cpu-grpo``)."""
    p = Path(spec)
    if p.is_file():
        return p
    for cand in (recipe_dir() / f"{spec}.yaml", recipe_dir() / str(spec)):
        if cand.is_file():
            return cand
    names = sorted(q.stem for q in recipe_dir().glob("*.yaml"))
    raise FileNotFoundError(
        f"training config {spec!r} not found (a YAML file, or one of the recipes {names})"
    )


def load_config(spec: str | Path | Mapping[str, Any], overrides: Sequence[str] = ()) -> TrainConfig:
    """The run config for a YAML file / recipe name / mapping, with ``key=value`` overrides applied."""
    if isinstance(spec, Mapping):
        data = dict(spec)
        where = "config"
    else:
        path = resolve_config_path(spec)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{path} is not valid YAML: {e}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be a mapping")
        where = str(path)
    data = apply_overrides(data, overrides)
    trainer = data.get("trainer")
    if trainer not in RUN_CONFIGS:
        raise ConfigError(f"{where}: 'trainer' must be one of {list(TRAINERS)}, got {trainer!r}")
    try:
        cfg = build_dataclass(RUN_CONFIGS[trainer], data, "")
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    except TypeError as e:
        raise ConfigError(f"{where}: {e}") from None
    if cfg.model.name_or_path is None and cfg.model.tiny is None:
        raise ConfigError(
            f"{where}: set model.name_or_path (hub id or folder) or model.tiny (build a tiny model)"
        )
    return cfg


def save_config(cfg: TrainConfig, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False), encoding="utf-8")
    return p


__all__ = [
    "RUN_CONFIGS",
    "TRAINERS",
    "ConfigError",
    "DataConfig",
    "EnvConfig",
    "EvalConfig",
    "GRPORunConfig",
    "ModelConfig",
    "PPORunConfig",
    "SFTRunConfig",
    "TrainConfig",
    "apply_overrides",
    "load_config",
    "recipe_dir",
    "resolve_config_path",
    "save_config",
]
