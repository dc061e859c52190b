"""Backends that evaluate ANSWER and SUMMARY, and the cache in front of them.

A backend has a ``key`` (names it in the cache) and two methods, ``answer(texts, question,
timeout_s)`` and ``summary(texts, timeout_s)``, each returning text or raising
:class:`BackendError`; optionally a third, ``expand(question, timeout_s) -> list[str]``: short
passages a text that answers the question would contain (query expansion for the compiler's
retrieval ranking, as in HyDE; it only orders the rows ANSWER is asked about, never the result). :class:`CachedBackend` wraps one: results are cached by
``(backend key, texts, question)``; a fault is retried a bounded number of times while the
statement's time budget lasts, then raised as :class:`BackendError` with a message that says
what failed (the session turns it into an error observation for that statement).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from typing import Any, Protocol

import apsw

from clarisql.envs.suql import lexicon as L


class BackendError(apsw.Error):
    """ANSWER/SUMMARY could not be evaluated (dead, slow or broken backend).

    A subclass of ``apsw.Error`` so that the sandbox reports it as a failed statement.
    """


class Backend(Protocol):
    key: str

    def answer(self, texts: list[str], question: str, timeout_s: float) -> str: ...

    def summary(self, texts: list[str], timeout_s: float) -> str: ...


def expansions(backend: Any, question: str, timeout_s: float) -> list[str]:
    """``backend.expand(question)`` when the backend has it, else ``[]``."""
    fn = getattr(backend, "expand", None)
    return list(fn(question, timeout_s)) if fn is not None else []


def as_texts(value: Any) -> list[str]:
    """A column value as a list of texts: a JSON array of strings, else the value as one text."""
    if value is None:
        return []
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value)
    if text.startswith("[") and text.endswith("]"):
        try:
            items = json.loads(text)
        except ValueError:
            items = None
        if isinstance(items, list):  # nested arrays (json_group_array of arrays) flatten
            return [t for x in items if x is not None for t in as_texts(x)]
    return [text]


_STOP = frozenset(
    "a an the is are was were do does did it its this that of in on at to for and or with be "
    "has have there any they them what who when which how place restaurant here".split()
)


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9'-]+", text.lower()) if w not in _STOP]


class OfflineBackend:
    """Deterministic, model-free ANSWER/SUMMARY (the default; used by tests and the hybrid suite).

    How it decides ANSWER(texts, question):
    1. a value question (starts with what/who/when/which/...) that names a slot of
       :mod:`clarisql.envs.suql.lexicon` (chef, year opened, signature dish) returns the value
       the texts state through that slot's templates, else ``"unknown"``;
    2. a yes/no question that names lexicon concepts (romantic, quiet, live music, outdoor
       seating, vegan, family) returns ``"Yes"`` when the texts support every named concept (a
       positive wording present, no negative wording anywhere), else ``"No"``;
    3. any other question: the sentence of the texts sharing the most content words with the
       question; a yes/no question gets ``"Yes"`` when that sentence holds at least two thirds
       of the question's content words, else ``"No"``; a value question gets that sentence (or
       ``"unknown"`` when no word is shared).

    SUMMARY(texts) is the first sentence of each of the first three texts, followed by
    ``"Mentions: ..."`` listing the lexicon concepts the texts support (lexicon order).

    ``expand(question)`` (query expansion for retrieval) returns the wordings this backend
    would accept as an answer: the positive wordings of the concepts a yes/no question names,
    or the templates (value removed) of the slot a value question names; ``[]`` otherwise.
    """

    key = "offline"

    def answer(self, texts: list[str], question: str, timeout_s: float = 0.0) -> str:
        wh = L.is_wh_question(question)
        if wh:
            slot = L.slot_in(question)
            if slot is not None:
                return L.extract(texts, slot) or "unknown"
        else:
            concepts = L.concepts_in(question)
            if concepts:
                return "Yes" if all(L.supports(texts, c) for c in concepts) else "No"
        qwords = set(_words(question))
        best, best_n = "", 0
        for text in texts:
            for sent in L.sentences(text):
                n = len(qwords & set(_words(sent)))
                if n > best_n:
                    best, best_n = sent, n
        if not wh:
            return "Yes" if qwords and best_n * 3 >= 2 * len(qwords) else "No"
        return best if best_n else "unknown"

    def summary(self, texts: list[str], timeout_s: float = 0.0) -> str:
        firsts = [L.sentences(t)[0] for t in texts[:3] if L.sentences(t)]
        found = [c.name for c in L.CONCEPTS if L.supports(texts, c)]
        out = " ".join(firsts)
        if found:
            out += (" " if out else "") + "Mentions: " + ", ".join(found) + "."
        return out

    def expand(self, question: str, timeout_s: float = 0.0) -> list[str]:
        if L.is_wh_question(question):
            slot = L.slot_in(question)
            return [t.replace("{x}", "").strip() for t in slot.templates] if slot else []
        return [w for c in L.concepts_in(question) for w in c.positive]


class OpenAIBackend:
    """ANSWER/SUMMARY by an OpenAI-compatible chat endpoint (vLLM, SGLang, OpenAI).

    One chat completion per evaluation, temperature 0, through the shared
    :class:`~clarisql.envs.endpoints.chat_http.ChatClient` (per-call deadline = what is left of the
    statement's budget; the endpoint's process-wide circuit breaker, so a dead server fails
    fast across statements and episodes). The client's own retries are off: the cache layer
    retries within the statement's time budget. ``Authorization`` is sent only when
    ``$OPENAI_API_KEY`` (``api_key_env``) is set.
    """

    ANSWER_PROMPT = (
        "Answer the question using only the text below. Answer yes/no questions with exactly "
        "'Yes' or 'No'. Answer other questions with the shortest phrase that answers them, or "
        "'unknown' when the text does not say.\n\nText:\n{text}\n\nQuestion: {question}"
    )
    SUMMARY_PROMPT = "Summarize the text below in at most three sentences.\n\nText:\n{text}"
    EXPAND_PROMPT = (
        "Write up to five short sentences, one per line, that a review or description would "
        "contain if it answered this question (with 'yes' for a yes/no question). No numbering."
        "\n\nQuestion: {question}"
    )

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        max_tokens: int = 64,
        timeout_s: float = 60.0,
    ) -> None:
        from clarisql.envs.endpoints.chat_http import ChatClient, chat_endpoint

        self.model = model
        self.key = f"openai:{model}@{base_url}"
        self.max_tokens = max_tokens
        self._client = ChatClient(
            chat_endpoint(base_url),
            timeout_s=timeout_s,
            max_retries=0,
            api_key_env=api_key_env,
        )

    def _chat(self, prompt: str, timeout_s: float) -> str:
        from clarisql.envs.endpoints.chat_http import ChatHTTPError, ChatReplyError

        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        try:
            reply = self._client.complete(body, deadline_s=max(0.05, timeout_s))
            content = reply["choices"][0]["message"]["content"]
        except (ChatHTTPError, ChatReplyError) as e:
            raise BackendError(f"{self.key}: {e}") from None
        except (IndexError, KeyError, TypeError) as e:
            raise BackendError(f"{self.key}: malformed reply ({type(e).__name__})") from None
        if not isinstance(content, str):
            raise BackendError(f"{self.key}: the reply has no text")
        return content.strip()

    def answer(self, texts: list[str], question: str, timeout_s: float = 10.0) -> str:
        return self._chat(
            self.ANSWER_PROMPT.format(text="\n".join(texts), question=question), timeout_s
        )

    def summary(self, texts: list[str], timeout_s: float = 10.0) -> str:
        return self._chat(self.SUMMARY_PROMPT.format(text="\n".join(texts)), timeout_s)

    def expand(self, question: str, timeout_s: float = 10.0) -> list[str]:
        reply = self._chat(self.EXPAND_PROMPT.format(question=question), timeout_s)
        lines = (re.sub(r"^[\s\-*\d.)]+", "", ln).strip() for ln in reply.splitlines())
        return [ln for ln in lines if ln][:5]


class CachedBackend:
    """A backend behind an LRU cache keyed by (backend key, texts, question), with retries.

    ``call(kind, texts, question, deadline)`` returns ``(text, hit)``; on a fault it retries up
    to ``retries`` more times (``backoff_s`` apart) while ``deadline`` (``time.monotonic()``)
    has not passed, then raises :class:`BackendError`.
    """

    def __init__(
        self,
        backend: Backend,
        max_entries: int = 200_000,
        retries: int = 2,
        backoff_s: float = 0.05,
    ) -> None:
        self.backend = backend
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self.max_entries = int(max_entries)
        self._cache: OrderedDict[tuple[str, str, tuple[str, ...], str], str] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        return self.backend.key

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def call(self, kind: str, texts: list[str], question: str, deadline: float) -> tuple[str, bool]:
        ck = (self.backend.key, kind, tuple(texts), question)
        with self._lock:
            hit = self._cache.get(ck)
            if hit is not None:
                self._cache.move_to_end(ck)
                return hit, True
        last: BackendError | None = None
        for attempt in range(self.retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                if kind == "answer":
                    out = self.backend.answer(texts, question, left)
                elif kind == "expand":
                    out = "\n".join(expansions(self.backend, question, left))
                else:
                    out = self.backend.summary(texts, left)
            except BackendError as e:
                last = e
            except Exception as e:  # a backend must not crash the statement
                last = BackendError(f"{self.backend.key}: {type(e).__name__}: {e}")
            else:
                with self._lock:
                    self._cache[ck] = out
                    while len(self._cache) > self.max_entries:
                        self._cache.popitem(last=False)
                return out, False
            if attempt < self.retries:
                time.sleep(
                    min(self.backoff_s * (2**attempt), max(0.0, deadline - time.monotonic()))
                )
        what = {"answer": "ANSWER", "expand": "query expansion"}.get(kind, "SUMMARY")
        reason = str(last) if last else "the statement's time budget ran out"
        raise BackendError(
            f"{what} failed after {attempt + 1} attempt(s) on backend {self.backend.key}: {reason}"
        )


__all__ = [
    "Backend",
    "BackendError",
    "CachedBackend",
    "OfflineBackend",
    "OpenAIBackend",
    "as_texts",
    "expansions",
]
