"""Chat backends for LLM-played users: an OpenAI-compatible HTTP endpoint and local transformers.

A backend turns a chat (``[{"role": ..., "content": ...}, ...]``) and a seed into one reply
string, or raises :class:`BackendError`. ``BackendError.retryable`` says whether trying again
may help (timeouts, connection failures, HTTP 408/409/429/5xx, empty or garbage replies) or not
(HTTP 400/401/403/404, an open circuit breaker, a model that cannot be loaded). Caching and the
offline fallback live in :class:`clarisql.envs.simulators.instruction.InstructionSimulator`.

- :class:`OpenAIChatBackend`: ``POST {base_url}/chat/completions`` with ``model``,
  ``temperature``, ``top_p``, ``max_tokens``, ``seed`` (vLLM, SGLang and hosted APIs accept it),
  and ``Authorization: Bearer $<api_key_env>`` when that variable is set, through
  :class:`clarisql.envs.endpoints.chat_http.ChatClient` (the ``openai`` package: its retries, a deadline
  per attempt and per call, a circuit breaker per endpoint shared across episodes).
  ``last_attempts`` holds the HTTP attempts of the last call.
- :class:`TransformersChatBackend`: a local causal LM through the tokenizer's chat template;
  torch/transformers are imported on first use (the ``train`` extra).

``<think>...</think>`` blocks are removed from replies (reasoning models), as DySQL-Bench does.
"""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

Messages = list[dict[str, str]]


class BackendError(RuntimeError):
    """A backend could not produce a usable reply."""

    def __init__(self, message: str, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


@runtime_checkable
class ChatBackend(Protocol):
    """What :class:`InstructionSimulator` needs from a backend."""

    name: str

    def cache_id(self) -> str:
        """A string naming everything besides the messages and seed that shapes a reply."""
        ...

    def complete(self, messages: Messages, seed: int) -> str:
        """One reply to ``messages`` (raises :class:`BackendError`)."""
        ...

    def close(self) -> None: ...


def clean_reply(text: Any) -> str:
    """Strip reasoning blocks and white space; raise :class:`BackendError` on garbage.

    Garbage: not a string, empty after stripping, or mostly control/unassigned characters.
    """
    if not isinstance(text, str):
        raise BackendError(f"reply content is {type(text).__name__}, not text")
    out = _strip_think(text).strip()
    if not out:
        raise BackendError("empty reply")
    bad = sum(
        1
        for ch in out
        if unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs") and ch not in "\n\t\r"
    )
    bad += out.count("\ufffd")
    if bad > len(out) / 2:
        raise BackendError("garbage reply (mostly control or invalid characters)")
    return out


def _strip_think(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks; an unterminated block and what follows it
    are dropped. One pass with ``str.find`` (a lazy regular expression is quadratic on many
    unclosed tags)."""
    out, i = [], 0
    while True:
        j = text.find("<think>", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("</think>", j + 7)
        if k < 0:
            return "".join(out)
        i = k + 8


def chat_endpoint(base_url: str) -> str:
    """``.../chat/completions`` from a server root, an API root (``.../v1``) or the full URL."""
    from clarisql.envs.endpoints.chat_http import chat_endpoint as endpoint

    return endpoint(base_url)


class OpenAIChatBackend:
    """Any OpenAI-compatible ``/chat/completions`` endpoint (see the module docstring).

    ``base_url`` may be the server root (``http://host:8000``), the API root
    (``http://host:8000/v1``) or the full ``.../chat/completions`` URL. ``timeout_s`` is the
    deadline of one attempt (the whole exchange); ``max_retries``/``backoff_s``/``sleep`` drive
    the client's retries; ``deadline_s`` caps one call, retries included.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str = "http://127.0.0.1:8000/v1",
        *,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 512,
        timeout_s: float = 30.0,
        api_key_env: str | None = "OPENAI_API_KEY",
        extra_body: dict[str, Any] | None = None,
        max_retries: int = 2,
        backoff_s: float = 0.5,
        deadline_s: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not model:
            raise ValueError("OpenAIChatBackend needs a model name")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        self.model = model
        self.url = self.endpoint(base_url)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.max_tokens = int(max_tokens)
        self.timeout_s = float(timeout_s)
        self.api_key_env = api_key_env
        self.extra_body = dict(extra_body or {})
        from clarisql.envs.endpoints.chat_http import ChatClient

        self.client = ChatClient(
            self.url,
            timeout_s=self.timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            deadline_s=deadline_s,
            api_key_env=api_key_env,
            jitter=False,
            sleep=sleep,
        )
        self.last_attempts = 0

    endpoint = staticmethod(chat_endpoint)

    def cache_id(self) -> str:
        return json.dumps(
            [
                "openai",
                self.url,
                self.model,
                self.temperature,
                self.top_p,
                self.max_tokens,
                self.extra_body,
            ],
            sort_keys=True,
        )

    def complete(self, messages: Messages, seed: int) -> str:
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": int(seed),
            **self.extra_body,
        }
        from clarisql.envs.endpoints.chat_http import ChatHTTPError, ChatReplyError

        try:
            data = self.client.complete(body)
        except ChatHTTPError as e:
            raise BackendError(str(e), e.retryable) from None
        except ChatReplyError as e:
            raise BackendError(str(e)) from None
        finally:
            self.last_attempts = self.client.last_call.attempts
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise BackendError(f"reply from {self.url} has no choices[0].message.content") from None
        return clean_reply(content)

    def close(self) -> None:
        self.client.close()


class TransformersChatBackend:
    """A local transformers causal LM (``train`` extra; imported lazily).

    ``model`` is a path or hub id, or an already loaded model (then pass ``tokenizer`` too).
    Sampling is seeded per call (``torch.manual_seed(seed)`` inside a forked RNG state), so a
    seed and a chat give the same reply on the same machine and library versions.
    """

    name = "hf"

    def __init__(
        self,
        model: Any,
        *,
        tokenizer: Any = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 256,
        device: str | None = None,
        dtype: str = "auto",
    ):
        self._model_ref = model
        self._tokenizer = tokenizer
        self._model: Any = None if isinstance(model, str) else model
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.max_tokens = int(max_tokens)
        self.device = device
        self.dtype = dtype
        self._load_error: str | None = None

    def cache_id(self) -> str:
        ref = (
            self._model_ref if isinstance(self._model_ref, str) else type(self._model_ref).__name__
        )
        return json.dumps(["hf", ref, self.temperature, self.top_p, self.max_tokens])

    def _load(self) -> None:
        if self._model is not None and self._tokenizer is not None:
            return
        if self._load_error:
            raise BackendError(self._load_error, retryable=False)
        try:
            import torch  # noqa: F401  (the train extra)
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            self._load_error = f"the transformers backend needs the train extra ({e})"
            raise BackendError(self._load_error, retryable=False) from None
        try:
            if self._tokenizer is None:
                self._tokenizer = AutoTokenizer.from_pretrained(self._model_ref)
            if self._model is None:
                self._model = AutoModelForCausalLM.from_pretrained(
                    self._model_ref, dtype=self.dtype
                )
                if self.device:
                    self._model.to(self.device)
                self._model.eval()
        except Exception as e:
            self._load_error = f"cannot load model {self._model_ref!r}: {type(e).__name__}: {e}"
            raise BackendError(self._load_error, retryable=False) from None

    def complete(self, messages: Messages, seed: int) -> str:
        self._load()
        import torch

        tok, model = self._tokenizer, self._model
        try:
            ids = tok.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            ids = {k: v.to(model.device) for k, v in ids.items()}
            sample = self.temperature > 0
            kw: dict[str, Any] = {"max_new_tokens": self.max_tokens, "do_sample": sample}
            if sample:
                kw.update(temperature=self.temperature, top_p=self.top_p)
            pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
            devices = [model.device.index or 0] if model.device.type == "cuda" else []
            with torch.random.fork_rng(devices=devices), torch.no_grad():
                torch.manual_seed(int(seed))
                out = model.generate(**ids, pad_token_id=pad, **kw)
            text = tok.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
        except BackendError:
            raise
        except Exception as e:
            raise BackendError(f"generation failed: {type(e).__name__}: {e}") from None
        return clean_reply(text)

    def close(self) -> None:
        self._model = None if isinstance(self._model_ref, str) else self._model


def make_backend(spec: str | ChatBackend | None, **kwargs: Any) -> ChatBackend | None:
    """A backend from a spec; ``None``/``"offline"`` mean no model (the offline user).

    Specs: ``"openai"`` (keywords ``model``, ``base_url``, ...), ``"openai:MODEL@URL"``,
    ``"hf"`` (keyword ``model``), ``"hf:PATH_OR_ID"``, or a :class:`ChatBackend` instance.
    Unknown keywords raise ``TypeError``; an unknown spec raises ``ValueError``.
    """
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("", "offline", "none")):
        return None
    if not isinstance(spec, str):
        if isinstance(spec, ChatBackend):
            return spec
        raise ValueError(f"backend must be a name or a ChatBackend, got {type(spec).__name__}")
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind in ("openai", "http", "vllm", "sglang"):
        if arg:
            model, _, url = arg.partition("@")
            kwargs.setdefault("model", model)
            if url:
                kwargs.setdefault("base_url", url)
        return OpenAIChatBackend(**kwargs)
    if kind in ("hf", "transformers", "local"):
        if arg:
            kwargs.setdefault("model", arg)
        return TransformersChatBackend(**kwargs)
    raise ValueError(
        f"unknown user-simulator backend {spec!r}: expected offline, openai[:MODEL@URL] or hf[:PATH]"
    )


__all__ = [
    "BackendError",
    "ChatBackend",
    "Messages",
    "OpenAIChatBackend",
    "TransformersChatBackend",
    "clean_reply",
    "make_backend",
]
