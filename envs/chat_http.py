"""One POST to an OpenAI-compatible ``/chat/completions`` endpoint (stdlib only).

Shared by the LLM-played user (:mod:`clarisql.envs.simulators.backends`) and the ``openai:``
policy (:mod:`clarisql.policies.openai_compat`); each keeps its own retry and fallback policy.

Contract: :func:`post_chat` returns the decoded JSON object of a 2xx reply, or raises
:class:`ChatHTTPError` (transport failure, timeout, HTTP error status: ``status``,
``retryable``, ``retry_after``) or :class:`ChatReplyError` (a 2xx reply that is not a JSON
object). Messages are one line and never include the request body.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.request
from typing import Any

#: Statuses worth retrying: timeouts, conflicts, rate limits, server errors.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class ChatHTTPError(RuntimeError):
    """The request failed (no reply, or an HTTP error status)."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        retryable: bool = True,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ChatReplyError(ValueError):
    """The endpoint answered 2xx with something that is not a JSON object."""


def chat_endpoint(base_url: str) -> str:
    """``.../chat/completions`` from a server root, an API root (``.../v1``) or the full URL."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if re.search(r"/v\d+$", url):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


def headers(api_key_env: str | None) -> dict[str, str]:
    """JSON headers, plus ``Authorization: Bearer $<api_key_env>`` when that variable is set."""
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        h["Authorization"] = f"Bearer {key}"
    return h


def _error_detail(e: urllib.error.HTTPError) -> str:
    try:
        text = e.read().decode("utf-8", "replace")
    except Exception:  # the body only feeds the message
        text = ""
    try:
        obj = json.loads(text)
        err = obj.get("error", obj)
        text = err.get("message", text) if isinstance(err, dict) else str(err)
    except (ValueError, AttributeError):
        pass
    return " ".join(text.split())[:300] or str(e.reason)


def _retry_after(e: urllib.error.HTTPError) -> float | None:
    v = e.headers.get("Retry-After") if e.headers else None
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def post_chat(
    url: str, body: dict[str, Any], *, timeout_s: float, api_key_env: str | None = None
) -> dict[str, Any]:
    """POST ``body`` as JSON to ``url`` and return the JSON reply (see the module docstring)."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    req = urllib.request.Request(url, data=data, headers=headers(api_key_env), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as e:
        raise ChatHTTPError(
            f"HTTP {e.code} from {url}: {_error_detail(e)}",
            e.code,
            e.code in RETRYABLE_STATUS,
            _retry_after(e),
        ) from None
    except (TimeoutError, OSError, http.client.HTTPException) as e:  # URLError is an OSError
        reason = getattr(e, "reason", e)
        if isinstance(reason, TimeoutError) or isinstance(e, TimeoutError):
            raise ChatHTTPError(f"request to {url} timed out after {timeout_s:g} s") from None
        raise ChatHTTPError(f"cannot reach {url}: {type(reason).__name__}: {reason}") from None
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ChatReplyError(f"reply from {url} is not JSON") from None
    if not isinstance(obj, dict):
        raise ChatReplyError(f"reply from {url} is not a JSON object")
    return obj
