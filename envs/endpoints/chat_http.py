"""One client for OpenAI-compatible ``/chat/completions`` endpoints, shared by the LLM-played user
(:mod:`clarisql.envs.simulators.backends`) and the ``openai:`` policy
(:mod:`clarisql.policies.openai_compat`).

Built on the ``openai`` package (httpx underneath): its retries (connection errors, timeouts,
HTTP 408/409/429/5xx, ``Retry-After`` honoured) and timeouts, plus what it lacks:

- a deadline per attempt over the whole exchange, not per socket read: a server that sends one
  byte a second is cut ``timeout_s`` after the attempt started (the response body is read through
  a stream that checks the clock, and every socket timeout is capped by the time left);
- a deadline per call (``deadline_s``, retries and back-off included) enforced by running the
  request on a worker thread: :meth:`ChatClient.complete` returns or raises by then whatever the
  server does (a worker stuck on a server that drips its headers ends at its own socket timeout);
- a circuit breaker per endpoint URL, shared by every client in the process (so across episodes
  and between policy and simulator): after ``fail_max`` calls in a row failed on transport,
  timeouts or retryable statuses, calls fail at once with :class:`CircuitOpenError` for
  ``reset_s`` seconds; then one trial call, made without retries, either closes it or opens it
  again. So once it is open, a hanging endpoint costs at most one attempt deadline per
  ``reset_s`` window, not a full retry budget per episode.

Contract: :meth:`ChatClient.complete` returns the decoded JSON object of a 2xx reply, or raises
:class:`ChatHTTPError` (``status``, ``retryable``; :class:`CircuitOpenError` is one, not
retryable) or :class:`ChatReplyError` (a 2xx reply that is not a JSON object, including JSON
nested too deep or with integers too long to convert). Messages are one line and never include
the request body. ``Authorization: Bearer $<api_key_env>`` is sent only when that variable is set.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai

try:  # openai >= 2.5x imports httpx2 lazily on first use and reads ``sys.modules`` meanwhile:
    # clients built on several threads at once then see a half-imported module
    # ("partially initialized module 'httpx2' has no attribute 'Timeout'"); import it once here.
    import httpx2  # noqa: F401
except ImportError:  # (older openai, or the httpx2 extra absent: nothing imports it lazily)
    pass

#: Statuses worth retrying: timeouts, conflicts, rate limits, server errors.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_BACKOFF_S = 30.0
#: Largest reply body read by default (a chat completion is a few KB; 2 MiB is generous).
MAX_REPLY_BYTES = 2 << 20


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


class CircuitOpenError(ChatHTTPError):
    """The endpoint's circuit breaker is open: no request was sent."""

    def __init__(self, message: str):
        super().__init__(message, None, retryable=False)


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


# --- circuit breaker ------------------------------------------------------------------------------
class CircuitBreaker:
    """Closed, open or half-open; shared per endpoint (see the module docstring).

    Written here rather than using ``pybreaker`` because ``pybreaker.CircuitBreaker.call`` holds
    one lock for the whole guarded call, which would serialise concurrent requests to an endpoint.
    This one only takes its lock to read and update its state.
    """

    def __init__(self, fail_max: int = 3, reset_s: float = 60.0):
        if fail_max < 1 or reset_s < 0:
            raise ValueError("circuit breaker: need fail_max >= 1 and reset_s >= 0")
        self.fail_max, self.reset_s = int(fail_max), float(reset_s)
        self._lock = threading.Lock()
        self.failures = 0
        self.opened_at: float | None = None
        self._trial = False
        self.last_error = ""
        self.times_opened = 0

    @property
    def state(self) -> str:
        with self._lock:
            if self.opened_at is None:
                return "closed"
            return "half-open" if self._trial else "open"

    def before(self, url: str) -> bool:
        """Allow a call (True: it is the half-open trial) or raise :class:`CircuitOpenError`."""
        with self._lock:
            if self.opened_at is None:
                return False
            wait = self.opened_at + self.reset_s - time.monotonic()
            if wait > 0 or self._trial:
                raise CircuitOpenError(
                    f"circuit open for {url}: {self.failures} call(s) in a row failed "
                    f"(last: {self.last_error}); next try in {max(wait, 0):.0f} s"
                )
            self._trial = True
            return True

    def success(self) -> None:
        with self._lock:
            self.failures, self.opened_at, self._trial = 0, None, False

    def failure(self, error: str) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = error[:200]
            if self._trial or self.failures >= self.fail_max:
                if self.opened_at is None or self._trial:
                    self.times_opened += 1
                self.opened_at, self._trial = time.monotonic(), False

    def release_trial(self) -> None:
        """A trial call ended without telling anything about the endpoint (e.g. HTTP 400)."""
        with self._lock:
            self._trial = False


_BREAKERS: dict[str, CircuitBreaker] = {}
_BREAKERS_LOCK = threading.Lock()


def breaker_for(url: str, fail_max: int = 3, reset_s: float = 60.0) -> CircuitBreaker:
    """The process-wide breaker of endpoint ``url`` (created with these settings on first use)."""
    with _BREAKERS_LOCK:
        b = _BREAKERS.get(url)
        if b is None:
            b = _BREAKERS[url] = CircuitBreaker(fail_max, reset_s)
        return b


# --- transport: per-attempt deadline ---------------------------------------------------------------
@dataclass
class _CallState:
    attempt_s: float
    deadline: float
    no_auth: bool
    max_bytes: int = 0  # 0: no cap
    attempts: int = 0
    sleeps: list[float] = field(default_factory=list)
    too_large: int = 0  # the reply's size when it passed max_bytes (then no more attempts)


class _ReplyTooLarge(Exception):
    """A reply body passed the byte cap (raised from the stream; see ``_CallState.too_large``)."""


class _RetryAfterTooLong(Exception):
    """The server asked to wait longer than the call may (``Retry-After``)."""

    def __init__(self, seconds: float, status: int | None):
        super().__init__(seconds)
        self.seconds, self.status = seconds, status


_CURRENT = threading.local()


class _DeadlineStream(httpx.SyncByteStream):
    """The reply body, chunk by chunk: cut at the deadline and at ``st.max_bytes`` (nothing past
    the cap is read or kept)."""

    def __init__(self, inner: Any, deadline: float, st: _CallState | None = None):
        self._inner, self._deadline, self._st = inner, deadline, st

    def __iter__(self) -> Iterator[bytes]:
        st = self._st
        cap = st.max_bytes if st is not None else 0
        size = 0
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout("the request deadline passed while reading the reply")
            size += len(chunk)
            if cap and size > cap:
                st.too_large = size  # type: ignore[union-attr]
                raise _ReplyTooLarge(size)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _DeadlineTransport(httpx.BaseTransport):
    """Caps each attempt at its deadline (socket timeouts and the body read); counts attempts."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        st: _CallState | None = getattr(_CURRENT, "state", None)
        if st is None:
            return self._inner.handle_request(request)
        if st.too_large:  # (the package retries any error: no attempt after a too-large reply)
            raise _ReplyTooLarge(st.too_large)
        st.attempts += 1
        now = time.monotonic()
        deadline = min(now + st.attempt_s, st.deadline)
        left = deadline - now
        if left <= 0:
            raise httpx.ConnectTimeout("the request deadline passed before the request was sent")
        if st.no_auth:
            request.headers.pop("Authorization", None)
        timeouts = dict(request.extensions.get("timeout") or {})
        request.extensions["timeout"] = {
            k: left if v is None else min(float(v), left)
            for k, v in {**dict.fromkeys(("connect", "read", "write", "pool")), **timeouts}.items()
        }
        resp = self._inner.handle_request(request)
        return httpx.Response(
            status_code=resp.status_code,
            headers=resp.headers,
            stream=_DeadlineStream(resp.stream, deadline, st),
            extensions=resp.extensions,
            request=request,
        )

    def close(self) -> None:
        self._inner.close()


class _OpenAI(openai.OpenAI):
    """The ``openai`` client with our back-off (``backoff_s``, capped by the call's deadline)."""

    backoff_s = 0.5
    jitter = True
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def _sleep_for_retry(
        self, *, retries_taken: int, max_retries: int, options: Any, response: Any
    ):
        st: _CallState | None = getattr(_CURRENT, "state", None)
        if st is not None and st.too_large:
            return  # (no wait: the next attempt is refused at once, see _DeadlineTransport)
        retry_after = self._parse_retry_after_header(response.headers if response else None)
        if retry_after is not None and st is not None:
            left = st.deadline - time.monotonic()
            if retry_after > min(left, _MAX_BACKOFF_S):  # said at once, not waited out
                raise _RetryAfterTooLong(retry_after, response.status_code if response else None)
        if retry_after is not None and 0 <= retry_after <= _MAX_BACKOFF_S:
            delay = float(retry_after)
        else:
            delay = self.backoff_s * (2**retries_taken)
            if self.jitter:
                delay *= 1 + random.random() / 4
        delay = min(delay, _MAX_BACKOFF_S)
        if st is not None:
            delay = max(0.0, min(delay, st.deadline - time.monotonic()))
            st.sleeps.append(delay)
        self.sleep(delay)


# --- the client ------------------------------------------------------------------------------------
@dataclass
class CallInfo:
    """What one :meth:`ChatClient.complete` call did: HTTP attempts and back-off sleeps."""

    attempts: int = 0
    sleeps: list[float] = field(default_factory=list)


class ChatClient:
    """POSTs chat requests to ``url`` (the full ``.../chat/completions`` URL).

    Args:
        timeout_s: deadline of one attempt, the whole exchange (connect, send, every byte back).
        max_retries: retries after the first attempt (the ``openai`` package's retry loop).
        backoff_s: first back-off, doubled each retry (``jitter``: up to +25 %), capped at 30 s;
            a ``Retry-After`` of at most 30 s is honoured instead.
        deadline_s: deadline of the whole call (default: every attempt and back-off in full).
        api_key_env: environment variable holding the API key (unset: no ``Authorization``).
        breaker: the circuit breaker (default: the process-wide one of ``url``).
        sleep: the sleep used for back-off (tests pass a fake).
        max_reply_bytes: largest reply body read (past it: :class:`ChatReplyError`, no retry);
            the body is read in chunks and nothing past the cap is kept.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        backoff_s: float = 0.5,
        deadline_s: float | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        breaker: CircuitBreaker | None = None,
        jitter: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ):
        if timeout_s <= 0 or max_retries < 0 or backoff_s < 0:
            raise ValueError("chat client: need timeout_s > 0, max_retries >= 0, backoff_s >= 0")
        self.url = url.rstrip("/")
        base = self.url.removesuffix("/chat/completions")
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        if deadline_s is None:
            backoffs = sum(min(backoff_s * 1.25 * 2**i, _MAX_BACKOFF_S) for i in range(max_retries))
            deadline_s = timeout_s * (max_retries + 1) + backoffs + 0.5
        self.deadline_s = float(deadline_s)
        self.api_key_env = api_key_env
        self.max_reply_bytes = int(max_reply_bytes)
        self.breaker = breaker if breaker is not None else breaker_for(self.url)
        self.last_call = CallInfo()
        self._client = _OpenAI(
            api_key="unused",  # replaced per request below (or the header dropped)
            base_url=base,
            max_retries=max_retries,
            timeout=httpx.Timeout(timeout_s),
            http_client=httpx.Client(transport=_DeadlineTransport(), timeout=timeout_s),
        )
        self._client.backoff_s, self._client.jitter, self._client.sleep = backoff_s, jitter, sleep

    def complete(self, body: dict[str, Any], deadline_s: float | None = None) -> dict[str, Any]:
        """POST ``body`` (``model``, ``messages`` and any other fields); see the module docstring.

        ``deadline_s``: this call's deadline when shorter than the client's (a caller's own
        budget, e.g. a SQL statement's); it also caps each attempt.
        """
        trial = self.breaker.before(self.url)
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        call_s = (
            self.deadline_s if deadline_s is None else max(0.0, min(self.deadline_s, deadline_s))
        )
        state = _CallState(
            min(self.timeout_s, call_s),
            time.monotonic() + call_s,
            no_auth=not key,
            max_bytes=self.max_reply_bytes,
        )
        try:
            raw = _on_worker(
                lambda: self._post(body, key, state, trial),
                state.deadline,
                f"no complete reply from {self.url} within the {call_s:.3g} s request deadline",
            )
        except ChatHTTPError as e:
            if e.retryable:
                self.breaker.failure(str(e))
            elif trial:
                self.breaker.release_trial()
            raise
        finally:
            self.last_call = CallInfo(state.attempts, list(state.sleeps))
        self.breaker.success()
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ChatReplyError(f"reply from {self.url} is not JSON") from None
        if not isinstance(obj, dict):
            raise ChatReplyError(f"reply from {self.url} is not a JSON object")
        return obj

    def _post(self, body: dict[str, Any], key: str | None, st: _CallState, trial: bool) -> bytes:
        _CURRENT.state = st
        client = self._client.with_options(max_retries=0) if trial else self._client
        rest = {k: v for k, v in body.items() if k not in ("model", "messages")}
        try:
            resp = client.chat.completions.with_raw_response.create(
                model=body.get("model", ""),
                messages=body.get("messages", []),
                extra_body=rest or None,
                extra_headers={"Authorization": f"Bearer {key}"} if key else None,
            )
            return resp.content
        except _ReplyTooLarge:
            raise ChatReplyError(
                f"reply from {self.url} is larger than {self.max_reply_bytes} bytes "
                "(max_reply_bytes): not read further"
            ) from None
        except _RetryAfterTooLong as e:
            raise ChatHTTPError(
                f"HTTP {e.status} from {self.url}: the server asks to retry after "
                f"{e.seconds:g} s (Retry-After), more than this call may wait",
                e.status,
                True,
                retry_after=e.seconds,
            ) from None
        except openai.APIStatusError as e:
            code = e.status_code
            after = _retry_after(e.response)
            said = f" (Retry-After {after:g} s)" if after is not None else ""
            raise ChatHTTPError(
                f"HTTP {code} from {self.url}: {_detail(e)}{said}",
                code,
                code in RETRYABLE_STATUS,
                retry_after=after,
            ) from None
        except openai.APITimeoutError:
            raise ChatHTTPError(
                f"request to {self.url} timed out (deadline {self.timeout_s:g} s per attempt)"
            ) from None
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e
            if st.too_large or isinstance(cause, _ReplyTooLarge):
                raise ChatReplyError(
                    f"reply from {self.url} is larger than {self.max_reply_bytes} bytes "
                    "(max_reply_bytes): not read further"
                ) from None
            raise ChatHTTPError(
                f"cannot reach {self.url}: {type(cause).__name__}: {cause}"[:300]
            ) from None
        except (ValueError, RecursionError, TypeError) as e:  # odd replies inside the package
            raise ChatReplyError(f"reply from {self.url} is unusable: {type(e).__name__}") from None
        finally:
            _CURRENT.state = None

    def close(self) -> None:
        self._client.close()


def _retry_after(response: Any) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds form), or None."""
    try:
        value = response.headers.get("retry-after")
        return float(value) if value is not None and 0 <= float(value) < 1e7 else None
    except (AttributeError, ValueError, TypeError):
        return None


def _detail(e: openai.APIStatusError) -> str:
    try:
        text = e.response.text
    except Exception:  # the body only feeds the message
        text = ""
    try:
        obj = json.loads(text)
        err = obj.get("error", obj)
        text = err.get("message", text) if isinstance(err, dict) else str(err)
    except (ValueError, AttributeError, RecursionError):
        pass
    return " ".join(str(text).split())[:300] or str(e.status_code)


def _on_worker(fn: Callable[[], bytes], deadline: float, late: str) -> bytes:
    """Run ``fn`` on a daemon thread; raise :class:`ChatHTTPError` if it is not done by
    ``deadline`` (the thread then ends on its own, at its socket timeout at the latest)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed to the caller
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, name="clarisql-chat-request", daemon=True).start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise ChatHTTPError(late)
    if "error" in box:
        raise box["error"]
    return box["value"]


__all__ = [
    "RETRYABLE_STATUS",
    "CallInfo",
    "ChatClient",
    "ChatHTTPError",
    "ChatReplyError",
    "CircuitBreaker",
    "CircuitOpenError",
    "breaker_for",
    "chat_endpoint",
]
