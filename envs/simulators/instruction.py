"""The instruction-following user simulator (DySQL-Bench's user), registered as ``"instruction"``.

The simulator is initialised with the task's hidden ``instruction`` and plays the user:
it reveals information only when asked, never invents facts the instruction lacks, confirms
consequential writes when asked, and ends the dialogue with ``###STOP###`` when satisfied.

Backends (one interface, :mod:`clarisql.envs.simulators.backends`)
- ``"offline"`` (default): :class:`~clarisql.envs.simulators.offline.OfflineUser`, rules over the
  instruction's facts; needs no model.
- ``"openai"`` / ``"openai:MODEL@URL"``: any OpenAI-compatible chat endpoint, prompted with
  DySQL-Bench's user rules (:data:`USER_RULES`). Keywords: ``model``, ``base_url``,
  ``temperature``, ``top_p``, ``max_tokens``, ``timeout_s``, ``api_key_env``, ``extra_body``.
- ``"hf"`` / ``"hf:PATH"``: a local transformers model (``train`` extra). Keywords: ``model``,
  ``tokenizer``, ``device``, ``temperature``, ``top_p``, ``max_tokens``.

Opening message
- offline: the instruction's request sentences, identity details held back
  (:meth:`OfflineUser.opening`; the DySQL importer stores the same text as ``Task.utterance``);
- LLM: generated from the instruction, as DySQL-Bench does (the agent's first line is
  ``"Hi! How can I help you today?"``).

Failures never crash an episode: for the ``openai`` backend the HTTP client
(:class:`clarisql.envs.endpoints.chat_http.ChatClient`) retries transport failures and retryable statuses
``max_retries`` times with exponential backoff (``backoff_s * 2**attempt``; HTTP
400/401/403/404 are not retried) under a deadline per attempt and per call, and its circuit
breaker, shared across episodes, answers at once while the endpoint is known to be down. A
failed call (or an empty or garbage reply, or a local model error) makes that reply come from
the offline user. With ``sticky_fallback`` (default) the rest of the episode stays offline.
Every reply's ``info`` records ``backend`` (who answered), ``cached``, ``attempts`` (HTTP
attempts) and, after a fallback, ``fallback: True`` and ``fallback_reason`` (e.g. "circuit open
for URL ..."); :attr:`reset_info` does the same for the opening.

No hidden state: every backend sees the instruction and the agent's messages only, never the
database (DySQL-Bench's user ends the dialogue from the conversation, not from the state), so a
reply or a ``###STOP###`` carries no information about the hidden score.

Reproducibility: offline replies are a pure function of the instruction and the agent's
messages. LLM replies are requested with the episode's seed and cached by request content
(backend settings, the whole chat, the seed) in memory and, with ``cache_dir``, on disk (one
JSON file per request), so the same seed and agent messages give the same replies.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clarisql.envs.simulators.backends import BackendError, ChatBackend, make_backend
from clarisql.envs.simulators.base import STOP_TOKEN, DialogueContext, SimulatorReply, UserSimulator
from clarisql.envs.simulators.offline import OfflineUser, extract_facts
from clarisql.envs.tasks import Label, Task

#: The agent's greeting DySQL-Bench puts before the user's first message.
AGENT_GREETING = "Hi! How can I help you today?"

# DySQL-Bench's user prompt (dysql_bench/envs/user.py, inherited from tau-bench; MIT License,
# Copyright (c) 2024 Sierra). Kept verbatim so LLM users behave as in the benchmark.
USER_RULES = """Rules:
- Just generate one line at a time to simulate the user's message.
- Do not give away all the instruction at once. Only provide the information that is necessary for the current step.
- Do not hallucinate information that is not provided in the instruction. For example, if the agent asks for the order id but it is not mentioned in the instruction, do not make up an order id, just say you do not remember or have it.
- If the instruction goal is satisified, generate '###STOP###' as a standalone message without anything else to end the conversation.
- Do not repeat the exact instruction in the conversation. Instead, use your own words to convey the same information.
- Try to make the conversation as natural as possible, and stick to the personalities in the instruction."""


def system_prompt(instruction: str | None) -> str:
    """DySQL-Bench's user system prompt for ``instruction``."""
    shown = f"\n\nInstruction: {instruction}\n" if instruction is not None else ""
    return f"You are a user interacting with an agent.{shown}\n{USER_RULES}"


_OPENAI_KEYS = (
    "model",
    "base_url",
    "temperature",
    "top_p",
    "max_tokens",
    "timeout_s",
    "api_key_env",
    "extra_body",
)
_HF_KEYS = ("model", "tokenizer", "temperature", "top_p", "max_tokens", "device", "dtype")


class ReplyCache:
    """LLM replies by request key: in memory, and on disk when ``folder`` is given.

    Disk entries are ``<folder>/<key[:2]>/<key>.json`` holding ``{"reply": text}``, written
    atomically; unreadable entries are ignored (and overwritten on the next store).
    """

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder).expanduser() if folder is not None else None
        self._mem: dict[str, str] = {}

    @staticmethod
    def key(backend_id: str, messages: list[dict[str, str]], seed: int) -> str:
        blob = json.dumps(
            {"backend": backend_id, "messages": messages, "seed": int(seed)},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        hit = self._mem.get(key)
        if hit is not None:
            return hit
        p = self._path(key)
        if p is None or not p.is_file():
            return None
        try:
            reply = json.loads(p.read_text(encoding="utf-8"))["reply"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not isinstance(reply, str) or not reply:
            return None
        self._mem[key] = reply
        return reply

    def put(self, key: str, reply: str) -> None:
        self._mem[key] = reply
        p = self._path(key)
        if p is None:
            return
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=p.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"reply": reply}, fh, ensure_ascii=False)
            os.replace(tmp, p)
        except OSError:
            pass  # the disk cache is an optimisation; the in-memory entry is kept


class InstructionSimulator(UserSimulator):
    """A user who follows the task's instruction (see the module docstring).

    Args:
        backend: ``"offline"`` (default), ``"openai"``/``"openai:MODEL@URL"``, ``"hf"``/
            ``"hf:PATH"`` or a :class:`~clarisql.envs.simulators.backends.ChatBackend`.
        max_retries: HTTP retries after a retryable failure (``openai`` backend given by name).
        backoff_s: first backoff; retry ``i`` waits ``backoff_s * 2**i`` (``openai`` by name).
        cache_dir: folder for the on-disk reply cache (``None``: memory only).
        sticky_fallback: after a fallback, answer offline for the rest of the episode.
        sleep: the sleep function used for backoff (``openai`` by name; tests pass a fake).
        backend keywords: see the module docstring.
    """

    name = "instruction"

    def __init__(
        self,
        backend: str | ChatBackend | None = "offline",
        *,
        max_retries: int = 2,
        backoff_s: float = 0.5,
        cache_dir: str | Path | None = None,
        sticky_fallback: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        **backend_kwargs: Any,
    ):
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if backoff_s < 0:
            raise ValueError("backoff_s must be >= 0")
        if backend is None:
            kind = "offline"
        elif isinstance(backend, str):
            kind = backend.split(":", 1)[0].strip().lower() or "offline"
        else:
            kind = "instance"
        if backend_kwargs:
            if kind in ("offline", "none"):
                raise TypeError(
                    f"the offline backend takes no model options, got {sorted(backend_kwargs)}"
                )
            if kind == "instance":
                raise TypeError(
                    "backend options were given with a backend instance: configure the instance"
                )
            allowed = _HF_KEYS if kind in ("hf", "transformers", "local") else _OPENAI_KEYS
            unknown = set(backend_kwargs) - set(allowed)
            if unknown:
                raise TypeError(f"unknown option(s) for the {kind} backend: {sorted(unknown)}")
        if kind in ("openai", "http", "vllm", "sglang"):
            backend_kwargs = {
                "max_retries": max_retries,
                "backoff_s": backoff_s,
                "sleep": sleep,
                **backend_kwargs,
            }
        self.backend: ChatBackend | None = make_backend(backend, **backend_kwargs)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.cache = ReplyCache(cache_dir)
        self.sticky_fallback = bool(sticky_fallback)
        self.reset_info: dict[str, Any] = {}
        self._offline: OfflineUser | None = None
        self._chat: list[dict[str, str]] = []
        self._seed = 0
        self._fallback_reason: str | None = None

    # --- episode ------------------------------------------------------------------------------
    def reset(self, task: Task, seed: int | None = None) -> str:
        instruction = task.instruction or task.utterance
        self._offline = OfflineUser(extract_facts(instruction))
        self._seed = int(seed or 0)
        self._fallback_reason = None
        if self.backend is None:
            self.reset_info = {"backend": "offline"}
            return self._offline.opening()
        self._chat = [
            {"role": "system", "content": system_prompt(instruction)},
            {"role": "user", "content": AGENT_GREETING},
        ]
        text, info = self._generate()
        if text is not None:
            text = text.replace(STOP_TOKEN, "").strip()
        if not text:
            text = self._offline.opening()
            info = self._fell_back(
                info, info.get("error") or "the model ended the dialogue at once"
            )
        self._chat.append({"role": "assistant", "content": text})
        self.reset_info = info
        return text

    def respond(self, message: str, labels: list[Label], ctx: DialogueContext) -> SimulatorReply:
        """Answer the agent's message (``labels`` are not used by this simulator)."""
        if self._offline is None:
            self.reset(ctx.task)
        assert self._offline is not None
        if self.backend is None or (self.sticky_fallback and self._fallback_reason):
            off = self._offline.respond(message)
            info: dict[str, Any] = {"backend": "offline", "intent": off.intent}
            if self._fallback_reason:
                info.update(fallback=True, fallback_reason=self._fallback_reason)
            return SimulatorReply(off.text, stop=off.stop, info=info)
        self._chat.append({"role": "user", "content": message})
        text, info = self._generate()
        if text is None:
            off = self._offline.respond(message)
            info = self._fell_back(info, info.get("error") or "no reply")
            info["intent"] = off.intent
            self._chat.append({"role": "assistant", "content": off.text})
            return SimulatorReply(off.text, stop=off.stop, info=info)
        self._chat.append({"role": "assistant", "content": text})
        return SimulatorReply(text, stop=STOP_TOKEN in text, info=info)

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()

    # --- helpers ------------------------------------------------------------------------------
    def _fell_back(self, info: dict[str, Any], reason: str) -> dict[str, Any]:
        self._fallback_reason = reason
        out = {k: v for k, v in info.items() if k != "error"}
        out.update(backend="offline", fallback=True, fallback_reason=reason)
        return out

    def _generate(self) -> tuple[str | None, dict[str, Any]]:
        """Ask the backend (cache first; the HTTP client retries); ``None`` on failure."""
        assert self.backend is not None
        messages = [dict(m) for m in self._chat]
        key = ReplyCache.key(self.backend.cache_id(), messages, self._seed)
        hit = self.cache.get(key)
        if hit is not None:
            return hit, {"backend": self.backend.name, "cached": True, "attempts": 0}
        text: str | None = None
        error = ""
        try:
            text = self.backend.complete(messages, self._seed)
        except BackendError as e:
            error = str(e)
        except Exception as e:  # a backend bug must not crash the episode either
            error = f"{type(e).__name__}: {e}"
        attempts = int(getattr(self.backend, "last_attempts", 1))
        info: dict[str, Any] = {"backend": self.backend.name, "cached": False, "attempts": attempts}
        if text is None:
            info["error"] = error
            return None, info
        self.cache.put(key, text)
        return text, info


__all__ = [
    "AGENT_GREETING",
    "USER_RULES",
    "InstructionSimulator",
    "ReplyCache",
    "system_prompt",
]
