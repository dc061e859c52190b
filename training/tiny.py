"""A tiny random-initialised causal LM and a locally trained tokenizer (no download).

Used by the tests, the ``tiny-cpu-*`` recipes and the learning-signal benchmark, so that the whole
training stack runs on a CPU without fetching weights.

- :func:`build_tokenizer`: byte-level BPE (any text round-trips) trained with the ``tokenizers``
  library on text from a suite (oracle episodes rendered through the chat template, the schema,
  the tool schemas), wrapped in ``PreTrainedTokenizerFast`` with Qwen2.5's chat template (TRL's copy,
  so TRL recognises it: tool-call parsing, prefix-preserving multi-turn rendering, the training
  template with generation markers for assistant-only SFT loss). Special tokens ``<|im_start|>``,
  ``<|im_end|>`` (end of turn = eos) and ``<|endoftext|>`` (padding); ``<tool_call>``,
  ``</tool_call>``, ``<tool_response>``, ``</tool_response>`` are single tokens.
- :func:`build_tiny_model`: a ``Qwen2ForCausalLM`` from a config (hidden 64, 2 layers by default).
- :func:`build_tiny`: both, saved to a folder that ``hf:DIR`` and the trainers load (reused when it
  exists with the same settings).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clarisql.envs.suites import Suite, load_suite
from clarisql.policies.hf import ChatFormat, tool_schemas
from clarisql.training.config import build_dataclass

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
ADDED_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")
SETTINGS_FILE = "clarisql_tiny.json"


@dataclass
class TinySpec:
    """Sizes of the tiny model and tokenizer."""

    vocab_size: int = 4096
    hidden_size: int = 64
    intermediate_size: int = 256
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 4096
    seed: int = 0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> TinySpec:
        return build_dataclass(cls, d, "tiny model spec")


def chat_template() -> str:
    """Qwen2.5's chat template as TRL ships it (supports tool calls)."""
    from trl.chat_template_utils import qwen2_5_chat_template

    return qwen2_5_chat_template


def _wrap(tok_obj: Any) -> Any:
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=tok_obj,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        model_max_length=1_000_000,
    )
    tok.add_tokens(list(ADDED_TOKENS))
    tok.chat_template = chat_template()
    return tok


def _bpe(texts: Iterable[str], vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def corpus(
    suite: str | Suite = "builtin",
    *,
    formats: Iterable[ChatFormat] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[str]:
    """Text to train the tokenizer on: every task's oracle episode rendered through the chat
    template in each of ``formats`` (default: tools mode with the brief system prompt), the full
    env system prompt, and the naive/gold SQL of every task."""
    from clarisql.envs.env import ClarifySQLEnv
    from clarisql.policies import make_policy
    from clarisql.rollouts.episode import run_episode

    formats = list(formats or [ChatFormat(tools=True, system="brief", include_schema=False)])
    boot = _wrap(_bpe(["a"], 300))  # renders templates only (tokenize=False): any vocabulary does
    env = ClarifySQLEnv(suite, **dict(env_kwargs or {}))
    oracle = make_policy("oracle")
    texts: list[str] = [json.dumps(s) for s in tool_schemas()]
    seen_system: set[str] = set()
    for task in env.suite.tasks:
        res = run_episode(env, oracle, task.id, seed=0)
        msgs = list(env.messages)
        if res.turns:
            msgs.append({"role": "tool", "content": res.turns[-1]["observation"]})
        if msgs[0]["content"] not in seen_system:
            seen_system.add(msgs[0]["content"])
            texts.append(msgs[0]["content"])
        for fmt in formats:
            conv = fmt.conversation(msgs)
            texts.append(boot.apply_chat_template(conv, tokenize=False, **fmt.render_kwargs()))
        for sql in (
            task.gold_sql,
            task.metadata.get("naive_sql"),
            *task.gold_actions,
            *task.metadata.get("naive_actions", []),
        ):
            if isinstance(sql, str):
                texts.append(sql)
    env.close()
    return texts


def build_tokenizer(texts: Iterable[str], vocab_size: int = 4096) -> Any:
    """A byte-level BPE tokenizer trained on ``texts`` with the tool-calling chat template."""
    return _wrap(_bpe(texts, vocab_size))


def build_tiny_model(tokenizer: Any, spec: TinySpec | None = None) -> Any:
    """A randomly initialised ``Qwen2ForCausalLM`` sized by ``spec`` for ``tokenizer``."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    spec = spec or TinySpec()
    torch.manual_seed(spec.seed)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.pad_token_id
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=[eos], pad_token_id=pad, bos_token_id=None
    )
    return model


def build_tiny(
    out_dir: str | Path,
    suite: str | Suite = "builtin",
    spec: TinySpec | Mapping[str, Any] | None = None,
    *,
    formats: Iterable[ChatFormat] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> Path:
    """Build (or reuse) a tiny model + tokenizer for ``suite`` in ``out_dir``; returns ``out_dir``.

    The folder is reused when it holds a model built with the same spec and suite name.
    """
    spec = spec if isinstance(spec, TinySpec) else TinySpec.from_dict(spec)
    out = Path(out_dir)
    suite_obj = load_suite(suite)
    settings = {"spec": asdict(spec), "suite": suite_obj.name, "n_tasks": len(suite_obj.tasks)}
    marker = out / SETTINGS_FILE
    if not overwrite and marker.is_file() and (out / "config.json").is_file():
        try:
            if json.loads(marker.read_text(encoding="utf-8")) == settings:
                return out
        except json.JSONDecodeError:
            pass
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(
        corpus(suite_obj, formats=formats, env_kwargs=env_kwargs), spec.vocab_size
    )
    model = build_tiny_model(tokenizer, spec)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    marker.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return out


__all__ = [
    "TinySpec",
    "build_tiny",
    "build_tiny_model",
    "build_tokenizer",
    "chat_template",
    "corpus",
]
