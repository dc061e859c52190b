"""``hf:PATH_OR_ID``: a transformers causal LM as a clarisql policy (needs the ``train`` extra).

What the model sees
- The episode's chat (``info["messages"]`` / ``env.messages``) rendered with the tokenizer's chat
  template. :class:`ChatFormat` decides how: in ``tools`` mode (default) each agent action becomes
  an assistant message with ``tool_calls`` and the environment's answer a ``tool`` message, and the
  four actions are offered to the template as tools (:class:`ActionTools`, JSON schemas from their
  type hints and docstrings) — exactly the conversation TRL's ``GRPOTrainer(environment_factory=...)``
  builds during training, so a checkpoint is evaluated in the format it was trained in. In ``text``
  mode the chat is passed as is: the env's system prompt describes the canonical tool-call text
  (:data:`clarisql.envs.actions.ACTION_FORMAT_HELP`), for templates without tool support.
- ``system`` chooses the system message: ``"env"`` (the env's, with the schema), ``"brief"`` (the
  env's instructions only; with ``include_schema`` the schema too) or any other text, verbatim.
- Checkpoints written by :mod:`clarisql.training` carry their format in ``clarisql_format.json``;
  ``HFPolicy`` reads it, so ``hf:DIR`` needs no options. Without that file the default applies
  (``tools`` mode when the chat template supports tool calls, else ``text``).

What the policy returns
The generated text (special tokens removed), which the environment parses
(:func:`clarisql.envs.actions.parse_action`); a reply without an action is the env's business (an
invalid-action observation). If the prompt would not fit the model's context the policy stops the
episode (``{"type": "stop", "sql": None}``) instead of truncating the conversation.

Loading
``PATH_OR_ID`` is a local folder or a hub id. A folder holding ``adapter_config.json`` is a PEFT
(LoRA) adapter: its base model is loaded and the adapter applied (merged by default); ``adapter=``
applies an adapter folder to any base. torch/transformers/peft are imported only when a policy is
created; this module itself is torch-free (the training code imports :class:`ActionTools` and
:class:`ChatFormat` from here).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clarisql.envs.actions import ACTION_FORMAT_HELP, TOOL_NAMES, ActionError, parse_action
from clarisql.envs.env import SYSTEM_PROMPT
from clarisql.policies.base import ActionLike, Observation, Policy

FORMAT_FILE = "clarisql_format.json"
TOOL_METHODS = ("ask_user", "execute_sql", "abstain", "stop")


class ActionTools:
    """The environment's four actions as typed, documented tool methods.

    Subclasses implement :meth:`_act` (take a structured action dict, return the observation
    text). The training adapter (:class:`clarisql.training.env_adapter.ClarifySQLToolEnv`)
    implements it with :meth:`ClarifySQLEnv.step`; :func:`tool_schemas` turns the methods into
    the JSON schemas a chat template shows the model. Keep the docstrings short: they are part
    of every prompt.
    """

    def ask_user(self, question: str, labels: list[str | list[str]] | None = None) -> str:
        """Ask the user a clarification question.

        Args:
            question: The question for the user.
            labels: What is unclear: "intent" (what to return), or [content, slot, kind] with kind Missing, Error or Unmatch (which city, district or year table) or not-exist (a name that does not exist as written).
        """
        return self._act(
            {"type": "clarify", "question": question, "labels": [] if labels is None else labels}
        )

    def execute_sql(self, sql: str) -> str:
        """Run one SQL statement on the database and see its result.

        Args:
            sql: The SQL statement.
        """
        return self._act({"type": "execute", "sql": sql})

    def abstain(self, reason: str) -> str:
        """Declare that the request cannot be answered from the database; ends the episode.

        Args:
            reason: Why it cannot be answered.
        """
        return self._act({"type": "abstain", "reason": reason})

    def stop(self, sql: str | None = None) -> str:
        """Finish; the answer is the result of sql (or of the last successful query); ends the episode.

        Args:
            sql: The final query whose result is the answer.
        """
        return self._act({"type": "stop", "sql": sql})

    def _act(self, action: dict[str, Any]) -> str:
        raise NotImplementedError


class _SchemaOnly(ActionTools):
    pass


def tool_schemas() -> list[dict[str, Any]]:
    """JSON schemas of the four action tools (from :class:`ActionTools`'s hints and docstrings)."""
    from transformers.utils import get_json_schema

    inst = _SchemaOnly()
    return [get_json_schema(getattr(inst, name)) for name in TOOL_METHODS]


def action_to_tool_call(action: Any) -> dict[str, Any]:
    """A structured or text action as a chat-template ``tool_calls`` item (raises ``ActionError``)."""
    act = parse_action(action)
    args = act.to_dict()
    kind = args.pop("type")
    if kind == "stop" and args.get("sql") is None:
        args = {}
    return {"type": "function", "function": {"name": TOOL_NAMES[kind], "arguments": args}}


@dataclass
class ChatFormat:
    """How an episode's chat is shown to a model (see the module docstring).

    - ``tools``: render actions as ``tool_calls`` and env answers as ``tool`` messages, with the
      action tools in the template; ``False``: the chat as is (text tool calls).
    - ``system``: ``"env"``, ``"brief"`` or literal text.
    - ``include_schema``: with ``"brief"``, keep the schema summary.
    - ``chat_template_kwargs``: extra template variables (e.g. ``{"enable_thinking": false}``).
    """

    tools: bool = True
    system: str = "env"
    include_schema: bool = True
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)

    # --- (de)serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> ChatFormat:
        d = dict(d or {})
        known = set(cls.__dataclass_fields__)
        unknown = set(d) - known
        if unknown:
            raise ValueError(
                f"chat format: unknown key(s) {sorted(unknown)}; known: {sorted(known)}"
            )
        return cls(**d)

    def save(self, directory: str | Path) -> Path:
        p = Path(directory) / FORMAT_FILE
        p.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return p

    @classmethod
    def load(cls, directory: str | Path) -> ChatFormat | None:
        """The format saved in ``directory``, or ``None`` when there is none."""
        p = Path(directory) / FORMAT_FILE
        if not p.is_file():
            return None
        try:
            return cls.from_dict(json.loads(p.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, TypeError) as e:
            raise ValueError(f"{p}: not a valid chat format ({e})") from None

    # --- rendering -----------------------------------------------------------------------------
    def system_text(self, env_system: str) -> str:
        """The system message for an episode whose env system prompt is ``env_system``."""
        if self.system == "env":
            return env_system
        if self.system == "brief":
            intro = SYSTEM_PROMPT.split("{actions}")[0].strip()
            parts = [intro]
            if not self.tools:
                parts.append(ACTION_FORMAT_HELP)
            if self.include_schema:
                _, sep, schema = env_system.partition(ACTION_FORMAT_HELP)
                parts.append(schema.strip() if sep else env_system)
            return "\n\n".join(parts)
        return self.system

    def conversation(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Template-ready messages for the env chat ``messages`` (system first, as the env writes it).

        Tools mode: an assistant message that parses as an action becomes a ``tool_calls`` message
        and the env message right after it a ``tool`` message named after the tool; an assistant
        message that does not parse stays text, and the env's error after it stays a user message.
        Text mode: ``tool`` messages become user messages.
        """
        out: list[dict[str, Any]] = []
        pending_tool: str | None = None
        for i, m in enumerate(messages):
            role, content = m.get("role"), m.get("content", "")
            if not isinstance(content, str):
                content = str(content)
            if i == 0 and role == "system":
                out.append({"role": "system", "content": self.system_text(content)})
                continue
            if not self.tools:
                out.append({"role": "user" if role == "tool" else role, "content": content})
                continue
            if role == "assistant":
                try:
                    call = action_to_tool_call(content)
                except ActionError:
                    out.append({"role": "assistant", "content": content})
                    pending_tool = None
                else:
                    out.append({"role": "assistant", "content": "", "tool_calls": [call]})
                    pending_tool = call["function"]["name"]
                continue
            if pending_tool is not None:
                out.append({"role": "tool", "name": pending_tool, "content": content})
                pending_tool = None
                continue
            out.append({"role": "user" if role == "tool" else role, "content": content})
        return out

    def render_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``apply_chat_template`` (tools and template variables)."""
        kw = dict(self.chat_template_kwargs)
        if self.tools:
            kw["tools"] = tool_schemas()
        return kw


# --- loading ---------------------------------------------------------------------------------
def load_model_and_tokenizer(
    path_or_id: str | Path,
    *,
    adapter: str | Path | None = None,
    merge_adapter: bool = True,
    dtype: str | None = "auto",
    device: str | None = None,
    trust_remote_code: bool = False,
) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer; apply a PEFT adapter (see the module docstring).

    Raises ``FileNotFoundError``/``ValueError`` with a readable message when nothing loads.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = str(path_or_id)
    p = Path(src)
    base = src
    if adapter is None and p.is_dir() and (p / "adapter_config.json").is_file():
        adapter = p
        base = json.loads((p / "adapter_config.json").read_text(encoding="utf-8")).get(
            "base_model_name_or_path"
        )
        if not base:
            raise ValueError(f"{p}/adapter_config.json names no base_model_name_or_path")
    if not p.exists() and (src.startswith((".", "/", "~")) or src.count("/") > 1):
        raise FileNotFoundError(f"hf policy: model folder {src} does not exist")
    tok_src = (
        str(adapter)
        if adapter is not None and (Path(adapter) / "tokenizer_config.json").is_file()
        else base
    )
    torch_dtype: Any = dtype
    if isinstance(dtype, str) and dtype != "auto":
        torch_dtype = getattr(torch, dtype)
    try:
        tokenizer = AutoTokenizer.from_pretrained(tok_src, trust_remote_code=trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(
            base, dtype=torch_dtype, trust_remote_code=trust_remote_code
        )
    except OSError as e:
        raise ValueError(f"hf policy: cannot load {base!r}: {e}") from None
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter))
        if merge_adapter:
            model = model.merge_and_unload()
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    model.eval()
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def eos_token_ids(model: Any, tokenizer: Any) -> list[int]:
    """End-of-turn token ids: the tokenizer's eos plus the generation config's."""
    ids: list[int] = []
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    gen = getattr(model, "generation_config", None)
    extra = getattr(gen, "eos_token_id", None) if gen is not None else None
    if isinstance(extra, int):
        extra = [extra]
    for e in extra or []:
        if int(e) not in ids:
            ids.append(int(e))
    return ids


def supports_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template renders tool calls and tool messages."""
    if getattr(tokenizer, "chat_template", None) is None:
        return False
    try:
        from trl.chat_template_utils import supports_tool_calling
    except ImportError:  # TRL absent: try rendering a tool call ourselves
        msgs = [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "zz_tool", "arguments": {"zz_arg": "zz_val"}},
                    }
                ],
            },
            {"role": "tool", "name": "zz_tool", "content": "zz_content"},
        ]
        try:
            text = tokenizer.apply_chat_template(msgs, tokenize=False)
        except Exception:
            return False
        return all(s in text for s in ("zz_tool", "zz_arg", "zz_val", "zz_content"))
    return bool(supports_tool_calling(tokenizer))


class HFPolicy(Policy):
    """A transformers causal LM acting in the environment (see the module docstring).

    Args:
        path_or_id: local folder (full model or PEFT adapter) or hub id.
        adapter: a PEFT adapter folder to apply on top of ``path_or_id``.
        format: a :class:`ChatFormat`, its dict, ``"tools"`` or ``"text"``; default: the
            checkpoint's ``clarisql_format.json``, else tools mode if the template supports it.
        max_new_tokens: generation budget per action.
        temperature: 0 means greedy decoding; otherwise sampling with ``top_p``/``top_k``.
        seed: seeds torch's generator at construction (sampling is reproducible per process).
        batch_size: prompts per ``generate`` call in :meth:`act_batch`.
        model, tokenizer: already loaded objects (then ``path_or_id`` is only a label).
        max_tokens: alias of ``max_new_tokens`` (``clarisql eval --max-tokens``).
        tools: force tools (``True``) or text (``False``) mode over the saved/default format.
        prompt: a ready prompt (:mod:`clarisql.policies.prompts`: ``qwen``, ``llama3``,
            ``generic``, ``auto`` or a YAML path): its system prompt and few-shot turns replace
            the env's system message and replies in its tool-call format are normalized.
        max_episode_tokens: new tokens one episode may generate in all; once spent, the policy
            stops the episode (``{"type": "stop", "sql": None}``), and no action is given more
            than what is left. ``None``: only ``max_new_tokens`` per action (and the env's turn
            limit) bound it.
        progress: print a line to stderr about every ``progress_s`` seconds of generation:
            actions, tokens and tokens per second (``clarisql eval`` turns it on for ``hf:``).
        threads: torch's intra-op threads for this process (``None``: leave torch's default).
            A tiny model on a busy CPU runs several times faster on 1 thread than on spinning
            OpenMP threads (``--policy-arg threads=1``).
    """

    name = "hf"

    def __init__(
        self,
        path_or_id: str | Path = "",
        *,
        adapter: str | Path | None = None,
        format: ChatFormat | Mapping[str, Any] | str | None = None,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        top_k: int = 0,
        seed: int = 0,
        batch_size: int = 8,
        dtype: str | None = "auto",
        device: str | None = None,
        merge_adapter: bool = True,
        trust_remote_code: bool = False,
        model: Any = None,
        tokenizer: Any = None,
        max_tokens: int | None = None,
        tools: bool | None = None,
        prompt: str | None = None,
        max_episode_tokens: int | None = None,
        progress: bool = False,
        progress_s: float = 15.0,
        threads: int | None = None,
    ):
        import torch

        if threads is not None:
            torch.set_num_threads(max(1, int(threads)))

        if max_tokens is not None:  # the eval CLI's --max-tokens
            max_new_tokens = max_tokens

        if model is None or tokenizer is None:
            if not path_or_id:
                raise ValueError("hf policy: give a model folder or hub id (hf:PATH_OR_ID)")
            model, tokenizer = load_model_and_tokenizer(
                path_or_id,
                adapter=adapter,
                merge_adapter=merge_adapter,
                dtype=dtype,
                device=device,
                trust_remote_code=trust_remote_code,
            )
        self.model, self.tokenizer = model, tokenizer
        self.name = f"hf:{path_or_id}" if path_or_id else "hf"
        if isinstance(format, ChatFormat):
            fmt = format
        elif isinstance(format, Mapping):
            fmt = ChatFormat.from_dict(format)
        elif format in ("tools", "text"):
            fmt = ChatFormat(tools=format == "tools")
        elif format is None:
            saved = None
            for d in (adapter, path_or_id):
                if d and Path(d).is_dir():
                    saved = ChatFormat.load(d)
                    if saved is not None:
                        break
            fmt = saved or ChatFormat(tools=supports_tools(tokenizer))
        else:
            raise ValueError(
                f"hf policy: format must be 'tools', 'text', a dict or ChatFormat, got {format!r}"
            )
        if tools is not None and bool(tools) != fmt.tools:  # the eval CLI's --tools
            fmt = ChatFormat(**{**fmt.to_dict(), "tools": bool(tools)})
        if fmt.tools and not supports_tools(tokenizer):
            raise ValueError(
                "hf policy: tools format requested but the chat template does not render tool calls; use format='text'"
            )
        self.format = fmt
        self._render_kwargs = fmt.render_kwargs()
        self.prompt = None
        if prompt:
            from clarisql.policies.prompts import load_prompt

            self.prompt = load_prompt(prompt, str(path_or_id))
            for k, v in self.prompt.chat_template_kwargs.items():
                self._render_kwargs.setdefault(k, v)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.top_p, self.top_k = float(top_p), int(top_k)
        self.batch_size = max(1, int(batch_size))
        self.eos_ids = eos_token_ids(model, tokenizer)
        cfg = (
            model.config.get_text_config()
            if hasattr(model.config, "get_text_config")
            else model.config
        )
        self.max_positions = int(getattr(cfg, "max_position_embeddings", 0) or 0)
        torch.manual_seed(int(seed))
        self._messages: list[dict[str, Any]] | None = None
        if max_episode_tokens is not None and int(max_episode_tokens) < 1:
            raise ValueError(
                f"hf policy: max_episode_tokens must be >= 1, got {max_episode_tokens}"
            )
        self.max_episode_tokens = None if max_episode_tokens is None else int(max_episode_tokens)
        #: tokens generated per running episode, keyed by its live message list
        self._spent: dict[int, int] = {}
        self.progress, self.progress_s = bool(progress), float(progress_s)
        self.stats = {"actions": 0, "tokens": 0, "generate_s": 0.0, "budget_stops": 0}
        self._last_report = 0.0

    def seed(self, seed: int) -> None:
        """Re-seed sampling (the rollout runner calls this per episode)."""
        import torch

        torch.manual_seed(int(seed))

    # --- prompt --------------------------------------------------------------------------------
    def prompt_ids(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        """Token ids of the rendered chat plus the assistant generation prompt."""
        if self.prompt is not None:
            messages = self.prompt.apply(messages)
        conv = self.format.conversation(messages)
        out = self.tokenizer.apply_chat_template(
            conv,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
            **self._render_kwargs,
        )
        return list(out)

    # --- Policy API ----------------------------------------------------------------------------
    def reset(self, observation: Observation, info: dict[str, Any], task: Any = None) -> None:
        # env.messages is the live chat list of this episode; step infos may not repeat it.
        self._messages = info.get("messages")
        if self._messages is not None:
            self._spent[id(self._messages)] = 0  # a new episode (an id may be reused)
            while len(self._spent) > 4096:
                self._spent.pop(next(iter(self._spent)))

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        return self.act_batch([observation], [info])[0]

    def act_batch(
        self, observations: Sequence[Observation], infos: Sequence[dict[str, Any]]
    ) -> list[ActionLike]:
        chats: list[Sequence[Mapping[str, Any]]] = []
        for info in infos:
            msgs = info.get("messages")
            if msgs is None:
                if len(infos) != 1 or self._messages is None:
                    raise ValueError(
                        "hf policy: act_batch needs info['messages'] for every episode (or reset() before act())"
                    )
                msgs = self._messages
            chats.append(msgs)
        prompts = [self.prompt_ids(m) for m in chats]
        actions: list[ActionLike | None] = [None] * len(prompts)
        todo = []
        left = [self._left(m) for m in chats]
        for i, ids in enumerate(prompts):
            if self.max_positions and len(ids) + self.max_new_tokens > self.max_positions:
                actions[i] = {"type": "stop", "sql": None}  # the context is exhausted
            elif left[i] is not None and left[i] <= 0:
                actions[i] = {"type": "stop", "sql": None}  # the episode's token budget is spent
                self.stats["budget_stops"] += 1
            else:
                todo.append(i)
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            budgets = [left[i] for i in chunk if left[i] is not None]
            t0 = time.perf_counter()
            outs = self.generate(
                [prompts[i] for i in chunk],
                max_new_tokens=min([self.max_new_tokens, *budgets]),
            )
            self._account(chunk, chats, outs, time.perf_counter() - t0)
            for i, ids in zip(chunk, outs):
                text = self.tokenizer.decode(ids, skip_special_tokens=True).strip()
                if self.prompt is not None:
                    from clarisql.policies.prompts import normalize_reply

                    text = normalize_reply(text)
                actions[i] = text
        return [a if a is not None else "" for a in actions]

    def _left(self, messages: Any) -> int | None:
        if self.max_episode_tokens is None:
            return None
        return self.max_episode_tokens - self._spent.get(id(messages), 0)

    def _account(self, chunk: Sequence[int], chats: Sequence[Any], outs: Any, secs: float) -> None:
        """Count generated tokens per episode and overall; print progress when due."""
        for i, ids in zip(chunk, outs):
            key = id(chats[i])
            self._spent[key] = self._spent.get(key, 0) + len(ids)
            self.stats["tokens"] += len(ids)
        self.stats["actions"] += len(chunk)
        self.stats["generate_s"] += secs
        now = time.perf_counter()
        if self.progress and now - self._last_report >= self.progress_s:
            self._last_report = now
            st = self.stats
            rate = st["tokens"] / st["generate_s"] if st["generate_s"] else 0.0
            print(
                f"{self.name}: {st['actions']} actions, {st['tokens']} tokens generated "
                f"({rate:.0f} tokens/s), {st['budget_stops']} episodes stopped by the token budget",
                file=sys.stderr,
                flush=True,
            )

    def generate(
        self, prompts: Sequence[Sequence[int]], max_new_tokens: int | None = None
    ) -> list[list[int]]:
        """Continue each prompt (token ids); returns the new tokens up to and including end of
        turn, at most ``max_new_tokens`` (default: the policy's) each."""
        import torch

        model, tok = self.model, self.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else self.eos_ids[0]
        width = max(len(p) for p in prompts)
        device = next(model.parameters()).device
        input_ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        attn = torch.zeros((len(prompts), width), dtype=torch.long)
        for r, p in enumerate(prompts):
            input_ids[r, width - len(p) :] = torch.tensor(list(p), dtype=torch.long)
            attn[r, width - len(p) :] = 1
        gen: dict[str, Any] = {
            "max_new_tokens": max_new_tokens or self.max_new_tokens,
            "pad_token_id": pad,
            "eos_token_id": self.eos_ids,
        }
        if self.temperature > 0:
            gen.update(
                do_sample=True, temperature=self.temperature, top_p=self.top_p, top_k=self.top_k
            )
        else:
            gen.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.no_grad():
            out = model.generate(
                input_ids=input_ids.to(device), attention_mask=attn.to(device), **gen
            )
        result = []
        for row in out[:, width:].tolist():
            cut = len(row)
            for j, t in enumerate(row):
                if t in self.eos_ids:
                    cut = j + 1
                    break
            result.append(row[:cut])
        return result

    def close(self) -> None:
        self.model = None
        self.tokenizer = None


__all__ = [
    "FORMAT_FILE",
    "TOOL_METHODS",
    "ActionTools",
    "ChatFormat",
    "HFPolicy",
    "action_to_tool_call",
    "eos_token_ids",
    "load_model_and_tokenizer",
    "supports_tools",
    "tool_schemas",
]
