"""``openai:MODEL@URL``: a policy backed by any OpenAI-compatible chat-completions endpoint.

Works with vLLM, SGLang, llama.cpp's server and hosted APIs: ``POST {URL}/chat/completions``
where ``URL`` is the base URL an OpenAI client would take (usually ending in ``/v1``; a URL that
already ends in ``/chat/completions`` is used as is).

Conversation
- :meth:`OpenAIPolicy.reset` copies ``info["messages"]`` (the env's system prompt with the action
  format and schema, and the user's opening message) and keeps its own running list: each
  reply is appended as an ``assistant`` message and each observation as the next message.
- Text mode (default): the model answers in the canonical tool-call text
  (``<tool_call>{"name": "execute_sql", ...}</tool_call>``) which the env parses; observations
  come back as ``user`` messages (SQL results prefixed ``[execute_sql result]``).
- ``tools=True``: the four actions are sent as OpenAI function tools; the first tool call of a
  reply is turned into the same canonical text, and the observation is sent back as a ``tool``
  message with its ``tool_call_id``.

Errors (contract)
- A reply that is not usable (not JSON, no choices, empty) becomes an action text the env
  rejects as an invalid action: the episode goes on, the agent sees the error.
- Requests go through :class:`clarisql.envs.endpoints.chat_http.ChatClient` (the ``openai`` package):
  connection failures, timeouts, HTTP 408/409/429 and 5xx are retried up to ``max_retries``
  times with exponential back-off (``Retry-After`` honoured, capped); ``timeout_s`` is the
  deadline of one attempt over the whole exchange (a server dripping bytes is cut), and one
  call never outlasts all its attempts and back-offs. After that, and at once for other HTTP
  errors (401 bad key, 404 unknown model, 400 bad request) or while the endpoint's circuit
  breaker is open (it opens after consecutive failed calls, for every episode of the process),
  the policy raises :class:`EndpointError` with a one-line message. The rollout runner records
  such episodes as failed (not as trajectories), so a later run retries them.
- :meth:`OpenAIPolicy.preflight` checks that the endpoint's host accepts connections; the
  runner calls it before the first episode so an unreachable endpoint is a clear error.

Requests to one URL are limited to ``concurrency`` at a time per process (shared by every
instance).
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from clarisql.envs.tool_schemas import TOOL_SCHEMAS
from clarisql.policies.base import ActionLike, Observation, Policy


class EndpointError(RuntimeError):
    """The endpoint could not be used (unreachable, refused the request, kept failing).

    ``fatal`` is true when retrying other episodes cannot help (HTTP 401/403/404: a bad key, an
    unknown model or URL); the rollout runner then stops the run at once.
    """

    def __init__(self, message: str, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


_SEMAPHORES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_SEM_LOCK = threading.Lock()

#: the action tools as OpenAI function schemas (defined with the actions, in the env package)
TOOLS: list[dict[str, Any]] = list(TOOL_SCHEMAS)


def _semaphore(url: str, n: int) -> threading.BoundedSemaphore:
    with _SEM_LOCK:
        sem = _SEMAPHORES.get((url, n))
        if sem is None:
            sem = _SEMAPHORES[(url, n)] = threading.BoundedSemaphore(n)
        return sem


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``MODEL@URL`` (the URL starts with http:// or https://)."""
    i = spec.rfind("@http")
    if i <= 0:
        raise ValueError(
            f"openai policy spec {spec!r}: expected MODEL@URL, "
            "e.g. openai:Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1"
        )
    model, url = spec[:i], spec[i + 1 :]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"openai policy spec {spec!r}: {url!r} is not an http(s) URL")
    return model, url


class OpenAIPolicy(Policy):
    """A chat model behind an OpenAI-compatible endpoint (see the module docstring).

    Args:
        spec: ``MODEL@URL``.
        api_key_env: environment variable holding the API key (no key: no ``Authorization``
            header, as local servers expect).
        temperature, top_p, max_tokens, stop: sampling settings sent with every request.
        timeout_s: per-request timeout; max_retries: retries after the first try;
            backoff_s: first back-off (doubled each retry, with jitter, capped at 30 s).
        concurrency: requests in flight to this URL per process.
        tools: use OpenAI function calling instead of the canonical tool-call text.
        send_seed: send the episode seed (``seed``) with each request.
        extra_body: more JSON fields for every request (e.g. ``{"top_k": 20}`` for vLLM).
        prompt: a ready prompt (:mod:`clarisql.policies.prompts`): ``qwen``, ``llama3``,
            ``generic``, ``auto`` (from the model name) or a YAML path: its system prompt and
            few-shot turns replace the env's system message, its chat-template variables go in
            ``chat_template_kwargs``, and replies in its tool-call format are normalized;
            ``None`` (default): the env's system prompt as is.
    """

    name = "openai"

    def __init__(
        self,
        spec: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = 512,
        stop: list[str] | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        concurrency: int = 8,
        tools: bool = False,
        send_seed: bool = True,
        extra_body: dict[str, Any] | None = None,
        prompt: str | None = None,
    ):
        self.model, self.base_url = parse_spec(spec)
        url = self.base_url.rstrip("/")
        self.url = url if url.endswith("/chat/completions") else url + "/chat/completions"
        if max_retries < 0 or concurrency < 1 or timeout_s <= 0:
            raise ValueError(
                "openai policy: need max_retries >= 0, concurrency >= 1, timeout_s > 0"
            )
        self.name = f"openai:{self.model}"
        self.api_key_env = api_key_env
        self.temperature, self.top_p, self.max_tokens, self.stop = (
            temperature,
            top_p,
            max_tokens,
            stop,
        )
        self.timeout_s, self.max_retries, self.backoff_s = (
            float(timeout_s),
            int(max_retries),
            float(backoff_s),
        )
        self.concurrency = int(concurrency)
        self.tools = bool(tools)
        self.send_seed = bool(send_seed)
        self.extra_body = dict(extra_body or {})
        from clarisql.envs.endpoints.chat_http import ChatClient

        self.client = ChatClient(
            self.url,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            backoff_s=self.backoff_s,
            api_key_env=api_key_env,
        )
        self.prompt = None
        if prompt:
            from clarisql.policies.prompts import load_prompt

            self.prompt = load_prompt(prompt, self.model)
            if self.prompt.chat_template_kwargs and "chat_template_kwargs" not in self.extra_body:
                self.extra_body["chat_template_kwargs"] = dict(self.prompt.chat_template_kwargs)
        self.messages: list[dict[str, Any]] = []
        self._pending_tool_id: str | None = None
        self._awaiting = False
        self._seed: int | None = None
        self.stats = {
            "requests": 0,
            "retries": 0,
            "unusable_replies": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }

    # --- Policy API ------------------------------------------------------------------------
    def seed(self, seed: int) -> None:
        """Seed for the next episode (sent as ``seed`` when ``send_seed``)."""
        self._seed = int(seed)

    def reset(self, observation: Observation, info: dict[str, Any], task: Any = None) -> None:
        msgs = info.get("messages")
        if msgs:
            self.messages = [dict(m) for m in msgs]
        else:
            from clarisql.envs.actions import ACTION_FORMAT_HELP
            from clarisql.envs.env import SYSTEM_PROMPT

            self.messages = [
                {
                    "role": "system",
                    "content": SYSTEM_PROMPT.format(
                        actions=ACTION_FORMAT_HELP, schema=observation.get("schema", "")
                    ),
                },
                {"role": "user", "content": observation.get("last", "")},
            ]
        if self.prompt is not None:
            self.messages = self.prompt.apply(self.messages)
        self._pending_tool_id = None
        self._awaiting = False

    def act(self, observation: Observation, info: dict[str, Any]) -> ActionLike:
        if self._awaiting:
            self._add_observation(observation, info)
        message = self._complete(self.messages)
        self._awaiting = True
        try:
            return self._take_reply(message)
        except (ValueError, RecursionError, TypeError) as e:  # e.g. tool arguments nested too deep
            return self._take_reply(self._unusable(e))

    def close(self) -> None:
        self.client.close()

    def preflight(self) -> None:
        """Raise :class:`EndpointError` when the endpoint's host does not accept connections."""
        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection(
                (parts.hostname, port), timeout=min(self.timeout_s, 10.0)
            ):
                pass
        except OSError as e:
            raise EndpointError(
                f"openai endpoint {self.base_url} is unreachable: {e.strerror or e}", fatal=True
            ) from None

    # --- internals ---------------------------------------------------------------------------
    def _add_observation(self, observation: Observation, info: dict[str, Any]) -> None:
        last = str(observation.get("last", ""))
        if self.tools and self._pending_tool_id is not None:
            self.messages.append(
                {"role": "tool", "tool_call_id": self._pending_tool_id, "content": last}
            )
        else:
            act = info.get("action") or {}
            if act.get("type") == "execute" and info.get("error") is None:
                last = "[execute_sql result]\n" + last
            self.messages.append({"role": "user", "content": last})
        self._pending_tool_id = None

    def _take_reply(self, message: dict[str, Any] | str) -> str:
        if isinstance(message, str):  # unusable reply: becomes an invalid action
            self.messages.append({"role": "assistant", "content": message})
            return message
        calls = message.get("tool_calls") or []
        content = message.get("content")
        content = content if isinstance(content, str) else ""
        if self.tools and calls and isinstance(calls[0], dict):
            call = calls[0]
            fn = call.get("function") or {}
            args = fn.get("arguments", {})
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except (ValueError, RecursionError):
                    pass  # left as a string: the env reports it as an invalid action
            call_id = str(call.get("id") or f"call_{len(self.messages)}")
            self._pending_tool_id = call_id
            self.messages.append(
                {
                    "role": "assistant",
                    "content": content or None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": fn.get("name"),
                                "arguments": fn.get("arguments")
                                if isinstance(fn.get("arguments"), str)
                                else json.dumps(args),
                            },
                        }
                    ],
                }
            )
            return (
                "<tool_call>"
                + json.dumps({"name": fn.get("name"), "arguments": args}, ensure_ascii=False)
                + "</tool_call>"
            )
        self.messages.append({"role": "assistant", "content": content})
        if self.prompt is not None:
            from clarisql.policies.prompts import normalize_reply

            return normalize_reply(content)
        return content

    def _body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.stop:
            body["stop"] = self.stop
        if self.send_seed and self._seed is not None:
            body["seed"] = self._seed
        if self.tools:
            body["tools"] = TOOLS
            body["tool_choice"] = "auto"
        body.update(self.extra_body)
        return body

    def _complete(self, messages: list[dict[str, Any]]) -> dict[str, Any] | str:
        """The reply's ``message`` dict, or a string describing an unusable reply."""
        from clarisql.envs.endpoints.chat_http import (
            ChatHTTPError,
            ChatReplyError,
            CircuitOpenError,
        )

        body = self._body(messages)
        try:
            with _semaphore(self.url, self.concurrency):
                try:
                    obj = self.client.complete(body)
                finally:
                    n = self.client.last_call.attempts
                    self.stats["requests"] += n
                    self.stats["retries"] += max(0, n - 1)
            return self._parse(obj)
        except ChatReplyError as e:
            return self._unusable(e)
        except CircuitOpenError as e:
            raise EndpointError(f"openai endpoint: {e}") from None
        except ChatHTTPError as e:
            if e.status is not None and not e.retryable:
                hint = f" (is ${self.api_key_env} set?)" if e.status in (401, 403) else ""
                raise EndpointError(
                    f"openai endpoint {self.url} answered {e}{hint}",
                    fatal=e.status in (401, 403, 404),
                ) from None
            raise EndpointError(f"openai endpoint {self.url} failed after {n} tries: {e}") from None

    def _unusable(self, e: Exception) -> str:
        self.stats["unusable_replies"] += 1
        return f"(the model endpoint sent an unusable reply: {type(e).__name__}: {str(e)[:200]})"

    def _parse(self, obj: dict[str, Any]) -> dict[str, Any] | str:
        try:
            msg = obj["choices"][0]["message"]
            if not isinstance(msg, dict):
                raise TypeError("message is not an object")
        except (KeyError, IndexError, TypeError) as e:
            return self._unusable(e)
        usage = obj.get("usage")
        if isinstance(usage, dict):
            for k in ("prompt_tokens", "completion_tokens"):
                if isinstance(usage.get(k), int):
                    self.stats[k] += usage[k]
        return msg
