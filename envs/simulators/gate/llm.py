"""The LLM question mapper: a two-stage parser through an OpenAI-compatible endpoint.

As in BIRD-Interact's user simulator, answering a free-text question takes two stages:

1. *parse* (this mapper): a model reads the user's request and the agent's question and names,
   from the public aspect catalog (:mod:`.aspects`), what the question asks about, and whether it
   is specific at all. The model never sees the gold labels or values.
2. *answer* (the Fixed simulator): the gate (:func:`clarisql.envs.simulators.gate.addressed`)
   keeps the gold labels the parsed aspects and the question's named contents address, and the
   usual templates answer them; the no-leak rules apply to the model's parse too.

Contract
- The model must reply with one JSON object ``{"aspects": [...], "specific": true|false}``
  (code fences and ``<think>`` blocks are tolerated); unknown aspect names are dropped.
- Failures are retried ``retries`` times (connection errors, timeouts, HTTP 408/429/5xx, a reply
  that is not such an object); after that, and at once for errors retrying cannot fix (HTTP
  400/401/403/404), the question is mapped by the ``fallback`` mapper (default ``offline``) and
  the result's ``source`` says ``llm-fallback:<name>``.
- Parses are cached per (backend settings, request, question), in memory and, with
  ``cache_file``, in a JSON-lines file that later runs reuse. Requests use temperature 0 and a
  fixed seed, so a run is reproducible.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from clarisql.envs.simulators.backends import BackendError, make_backend
from clarisql.envs.simulators.gate.aspects import ASPECT_NAMES
from clarisql.envs.simulators.gate.types import GateContext, MappedQuestion, QuestionMapper

SYSTEM = """\
You read a clarification question that a data assistant asks a user about the user's request, \
and say what the question asks about. Aspects:
- intent: what the user wants returned (which figure, measure, column or kind of answer)
- city: which city
- district: which district or area
- year: which year or time period
- enterprise: which company (e.g. its full name)
- project: which project, development or residential compound (e.g. its full name)
Reply with one JSON object and nothing else: {"aspects": [...], "specific": true|false}. \
"specific" is false when the question does not point at a particular part of the request \
(e.g. "anything unclear?", "tell me everything", or a list of every option)."""


def _first_object(text: str) -> dict[str, Any] | None:
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                obj, _ = dec.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def parse_reply(text: str) -> tuple[frozenset[str], bool]:
    """``(aspects, specific)`` from the model's reply, or ``ValueError``."""
    obj = _first_object(text or "")
    if obj is None or not isinstance(obj.get("aspects", []), list):
        raise ValueError(f"not an aspects object: {str(text)[:120]!r}")
    aspects = frozenset(
        str(a).strip().lower()
        for a in obj.get("aspects", [])
        if str(a).strip().lower() in ASPECT_NAMES
    )
    specific = obj.get("specific", True)
    return aspects, specific is not False and str(specific).lower() != "false"


class LLMMapper:
    """Question → aspects through a chat model (see the module docstring).

    Args:
        spec: ``MODEL@URL`` or a backend spec (``openai:MODEL@URL``, ``hf:PATH``).
        retries: tries after the first one (back-off ``backoff_s``, doubled each time).
        fallback: mapper spec used when the model fails (``offline``, ``lexical``).
        cache_file: JSON-lines cache shared across runs (``None``: memory only).
        backend_kwargs: more :class:`~clarisql.envs.simulators.backends.OpenAIChatBackend`
            options (``timeout_s``, ``api_key_env``, ...).
    """

    name = "llm"

    def __init__(
        self,
        spec: str,
        *,
        retries: int = 2,
        fallback: str = "offline",
        cache_file: str | Path | None = None,
        backoff_s: float = 0.2,
        backend_kwargs: dict[str, Any] | None = None,
    ):
        if retries < 0:
            raise ValueError("retries must be >= 0")
        backend_spec = spec if ":" in spec.split("@", 1)[0] else f"openai:{spec}"
        kw: dict[str, Any] = {"max_tokens": 128, "timeout_s": 30.0}
        if backend_spec.startswith("openai"):
            # transport failures are retried by the shared HTTP client (with its deadline and
            # circuit breaker); this mapper's own loop only re-asks after an unreadable reply
            kw.update(max_retries=int(retries), backoff_s=float(backoff_s))
        kw.update(dict(backend_kwargs or {}))
        self.backend = make_backend(backend_spec, **kw)
        if self.backend is None:
            raise ValueError(f"llm mapper: {spec!r} names no model")
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self._fallback_spec = fallback
        self._fallback: Any = None
        self.cache_file = Path(cache_file) if cache_file else None
        self._cache: dict[str, tuple[list[str], bool]] = {}
        self._lock = threading.Lock()
        self.stats = {"requests": 0, "retries": 0, "cache_hits": 0, "fallbacks": 0}
        if self.cache_file and self.cache_file.is_file():
            for line in self.cache_file.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                    self._cache[rec["key"]] = (list(rec["aspects"]), bool(rec["specific"]))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn line: ignored, the question is parsed again

    @property
    def fallback(self) -> Any:
        if self._fallback is None:
            from clarisql.envs.simulators.gate.offline import OfflineMapper

            spec = self._fallback_spec
            if isinstance(spec, QuestionMapper):
                self._fallback = spec
            elif spec in (None, "offline", "lexical"):
                self._fallback = OfflineMapper(embeddings=spec != "lexical")
            else:
                raise ValueError(f"unknown fallback mapper {spec!r}: expected offline or lexical")
        return self._fallback

    def _key(self, question: str, request: str) -> str:
        raw = json.dumps([self.backend.cache_id(), request, question], ensure_ascii=False)
        return hashlib.sha256(raw.encode()).hexdigest()

    def _store(self, key: str, aspects: frozenset[str], specific: bool) -> None:
        with self._lock:
            self._cache[key] = (sorted(aspects), specific)
            if self.cache_file:
                self.cache_file.parent.mkdir(parents=True, exist_ok=True)
                rec = {"key": key, "aspects": sorted(aspects), "specific": specific}
                with self.cache_file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")

    def _count_requests(self) -> None:
        attempts = max(1, int(getattr(self.backend, "last_attempts", 1) or 1))
        self.stats["requests"] += attempts
        self.stats["retries"] += attempts - 1

    def map(self, question: str, ctx: GateContext) -> MappedQuestion:
        key = self._key(question, ctx.request)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            self.stats["cache_hits"] += 1
            return MappedQuestion(frozenset(hit[0]), {}, "llm", specific=hit[1])
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Request: {ctx.request}\nQuestion: {question}"},
        ]
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats["retries"] += 1
            try:
                text = self.backend.complete(messages, seed=0)
            except BackendError:
                self._count_requests()
                break  # the client already retried what could be retried
            self._count_requests()
            try:
                aspects, specific = parse_reply(text)
            except ValueError:
                continue
            self._store(key, aspects, specific)
            return MappedQuestion(aspects, {}, "llm", specific=specific)
        self.stats["fallbacks"] += 1
        mapped = self.fallback.map(question, ctx)
        return MappedQuestion(
            mapped.aspects, mapped.scores, f"llm-fallback:{mapped.source}", mapped.specific
        )
