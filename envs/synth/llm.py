"""OrQA's LLM path: coder -> question writer -> reviewer, and an LLM scorer for discovered pairs.

Contract
- :func:`connect` parses ``openai:MODEL@URL`` and probes the endpoint with one tiny request; when
  it does not answer it raises :class:`~.types.SynthError` with one line (no suite is written).
- :meth:`LLMClient.drafts` makes up to ``n`` :class:`~.types.Draft` objects, cycling over the
  (difficulty, type) cells the lake allows. Per draft: the coder writes one SQLite query for
  the cell over the relevant tables' schema and samples; the :class:`~.verify.Verifier` runs it
  (the database's error message of every failing query is kept in ``meta['rejected']`` and sent
  back to the coder); the question writer phrases it; the reviewer answers ``ACCEPT`` or
  ``REVISE: feedback``. At most ``max_reviews`` (3) review cycles; a draft never accepted is
  dropped. ``meta`` holds ``review_count``, ``tokens`` (prompt + completion, from the reply's
  ``usage``), ``generation_time_s`` and ``rejected``.
- :meth:`LLMClient.rescore` asks for each discovered pair a 0-10 score (OrQA's scale) and keeps
  the pairs scoring at least the threshold, with the LLM's score; at most
  :data:`MAX_SCORED_PAIRS` pairs of each kind (the best by offline score: a lake of 100 same-schema
  city tables has ~5,000 union pairs), the others keep their offline score.
- Transport: the shared :class:`~clarisql.envs.endpoints.chat_http.ChatClient` (retries with backoff on
  408/409/429/5xx and connection errors, ``max_retries``; a deadline per attempt and per call;
  the endpoint's process-wide circuit breaker), and an on-disk cache keyed by
  model + messages (a cache hit costs no request and no tokens), so re-runs are cheap and
  reproducible (a hit returns the tokens the reply cost when it was made, so task metadata is
  the same with and without the cache). An endpoint that fails mid-run raises ``LLMError``; the
  pipeline stops with one line, and a re-run resumes from the cache.
- Every task of every category then goes through the question writer and the reviewer:
  :mod:`.llm_review`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import sqlglot
from sqlglot import exp

from clarisql.envs.synth.types import DIFFICULTIES, Draft, LakeProfile, SynthError, TableProfile
from clarisql.envs.synth.verify import Verifier, echoes_question, is_trivial

DIFFICULTY_RULES = {
    "simple": "a simple query: filters (WHERE) on one or two columns, no aggregation",
    "moderate": "a moderate query: CAST of text-stored numbers, GROUP BY and aggregation",
    "challenging": "a challenging query: a subquery or a window function (RANK, SUM OVER ...)",
}
CODER = (
    "You write one SQLite SELECT query for a data question. Quote identifiers with double "
    "quotes. Numbers stored as text next to 'NA' or '' must be filtered and CAST. Return at "
    "most 200 rows; ORDER BY every output column when order matters. Reply with the SQL only."
)
WRITER = (
    "You write the natural-language question a user would ask to get exactly the result of the "
    "given SQL query. Mention every filter value. Reply with the question only."
)
REVIEWER = (
    "You review a text-to-SQL pair. Reply ACCEPT if the SQL answers the question exactly and "
    "the question is natural, else REVISE: <what to change>."
)
SCORER = (
    "Rate from 0 to 10 how meaningful it is to combine the two columns or tables below "
    "(OrQA's scale: 0 unrelated, 10 clearly the same entity). Reply with the number only."
)


class LLMError(RuntimeError):
    """The endpoint failed after retries (or replied with nothing usable)."""


#: The probe's deadline (seconds, retries included) before a run starts.
PROBE_S = 20.0
#: Pairs of each kind (joins, unions) the LLM scores; the rest keep their offline score.
MAX_SCORED_PAIRS = 300


def parse_spec(spec: str) -> tuple[str, str]:
    """``openai:MODEL@URL`` -> ``(MODEL, URL)``; :class:`SynthError` otherwise."""
    m = re.fullmatch(r"openai:([^@]+)@(https?://\S+)", spec.strip())
    if not m:
        raise SynthError(
            f"--llm {spec!r}: expected openai:MODEL@URL (e.g. openai:gpt-4o@http://127.0.0.1:8000/v1)"
        )
    try:  # a URL the HTTP client would reject later ("http://[::1", "http://h:port")
        parts = urlsplit(m.group(2))
        ok = bool(parts.hostname) and (parts.port is None or parts.port > 0)
    except ValueError as e:
        raise SynthError(f"--llm {spec!r}: the URL is not valid ({e})") from None
    if not ok:
        raise SynthError(f"--llm {spec!r}: the URL names no host or port")
    return m.group(1), m.group(2).rstrip("/")


@dataclass
class Usage:
    requests: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)


class LLMClient:
    """Chat calls with retries, timeout, cache and token counts (see the module docstring)."""

    def __init__(
        self,
        model: str,
        url: str,
        cache_dir: str | Path | None = None,
        max_retries: int = 2,
        timeout_s: float = 30.0,
        max_reviews: int = 3,
    ):
        from clarisql.envs.endpoints.chat_http import ChatClient, chat_endpoint

        self.model, self.url = model, url
        self.client = ChatClient(
            chat_endpoint(url), timeout_s=timeout_s, max_retries=max_retries, backoff_s=0.2
        )
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.max_reviews = max_reviews
        self.usage = Usage()
        self._lock = threading.Lock()  # usage counts (the writer/reviewer runs on threads)

    # --- transport ----------------------------------------------------------------------------
    def chat(
        self,
        system: str,
        user: str,
        max_tokens: int = 400,
        cache: bool = True,
        deadline_s: float | None = None,
    ) -> tuple[str, int]:
        """The reply text and the tokens it cost (a cache hit: the tokens it cost when made);
        :class:`LLMError` on failure. ``deadline_s`` bounds the call, retries included."""
        from clarisql.envs.endpoints.chat_http import ChatHTTPError, ChatReplyError

        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        key = hashlib.sha256(json.dumps([self.model, messages, max_tokens]).encode()).hexdigest()
        path = self.cache_dir / f"{key}.json" if (cache and self.cache_dir) else None
        if path is not None and path.is_file():
            with self._lock:
                self.usage.cache_hits += 1
            hit = json.loads(path.read_text(encoding="utf-8"))
            return hit["text"], int(hit.get("tokens", 0))
        with self._lock:
            self.usage.requests += 1
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        try:
            r = self.client.complete(body, deadline_s=deadline_s)
        except (ChatHTTPError, ChatReplyError) as e:
            msg = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"
            with self._lock:
                self.usage.errors.append(msg)
            raise LLMError(f"LLM endpoint {self.url}: {msg}") from None
        try:
            text = (r["choices"][0]["message"]["content"] or "").strip()
        except (KeyError, IndexError, TypeError, AttributeError):
            text = ""
        if not text:
            raise LLMError(f"LLM endpoint {self.url}: an empty reply")
        use = r.get("usage") if isinstance(r.get("usage"), dict) else {}
        prompt, completion = (
            int(use.get("prompt_tokens") or 0),
            int(use.get("completion_tokens") or 0),
        )
        with self._lock:
            self.usage.prompt_tokens += prompt
            self.usage.completion_tokens += completion
        tokens = prompt + completion
        if path is not None:  # (written whole, then renamed: a reader never sees half of it)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps({"text": text, "tokens": tokens}), encoding="utf-8")
            tmp.replace(path)
        return text, tokens

    # --- pair scoring ---------------------------------------------------------------------------
    def score(self, description: str) -> float | None:
        text, _ = self.chat(SCORER, description, max_tokens=8)
        m = re.search(r"\d+(\.\d+)?", text)
        return min(10.0, float(m.group())) if m else None

    def rescore(self, lake: LakeProfile, threshold: float) -> LakeProfile:
        """``lake`` with LLM scores on its pairs, those below ``threshold`` dropped (the first
        :data:`MAX_SCORED_PAIRS` of each kind: pairs come sorted by offline score)."""
        joins, unions = [], []
        for j in lake.joins[:MAX_SCORED_PAIRS]:
            desc = (
                f"Column {j.left[0]}.{j.left[1]} (samples {_samples(lake, *j.left)}) and column "
                f"{j.right[0]}.{j.right[1]} (samples {_samples(lake, *j.right)}); value "
                f"containment {j.containment:.2f}."
            )
            s = self.score(desc)
            if s is None or s >= threshold:
                joins.append(j if s is None else replace(j, score=s))
        for u in lake.unions[:MAX_SCORED_PAIRS]:
            desc = f"Tables {u.left} and {u.right} with matching columns {[a for a, _ in u.column_map]}."
            s = self.score(desc)
            if s is None or s >= threshold:
                unions.append(u if s is None else replace(u, score=s))
        # the unscored rest keeps its offline order after the scored ones (the same order)
        rest_j, rest_u = lake.joins[MAX_SCORED_PAIRS:], lake.unions[MAX_SCORED_PAIRS:]
        return replace(lake, joins=(*joins, *rest_j), unions=(*unions, *rest_u))

    # --- drafts ---------------------------------------------------------------------------------
    def drafts(self, lake: LakeProfile, v: Verifier, rng: random.Random, n: int) -> list[Draft]:
        """Up to ``n`` verified drafts from the coder -> writer -> reviewer loop."""
        cells = _cells(lake)
        out: list[Draft] = []
        seen: set[str] = set()
        tries = 0
        while len(out) < n and tries < 3 * n + 6:
            difficulty, qtype, tables = cells[tries % len(cells)]
            tries += 1
            d = self.one_draft(lake, v, difficulty, qtype, tables, hint=tries)
            if d is not None and d.question.casefold() not in seen:
                seen.add(d.question.casefold())
                out.append(d)
        return out

    def one_draft(
        self,
        lake: LakeProfile,
        v: Verifier,
        difficulty: str,
        qtype: str,
        tables: tuple[str, ...],
        hint: int = 0,
    ) -> Draft | None:
        t0 = time.perf_counter()
        schema = "\n".join(_describe(lake.table(t)) for t in tables)
        task = f"Write {DIFFICULTY_RULES[difficulty]} of type {qtype} over these tables (variant {hint}):\n{schema}"
        rejected: list[str] = []
        tokens, feedback, reviews = 0, "", 0
        for _ in range(2 * self.max_reviews):
            if reviews >= self.max_reviews:
                break
            reply, k = self.chat(CODER, task + feedback)
            tokens += k
            sql = _extract_sql(reply)
            rows = v.rows(sql)
            if rows is None or is_trivial(rows):
                err = v.last_error or "the answer is empty or trivial"
                rejected.append(err)
                feedback = f"\nYour previous query {sql!r} failed: {err}. Fix it."
                continue
            question, k = self.chat(WRITER, f"SQL: {sql}\nFirst rows: {rows[:5]!r}")
            tokens += k
            if echoes_question(rows, question):
                rejected.append("the answer is written in the question")
                continue
            verdict, k = self.chat(
                REVIEWER, f"Question: {question}\nSQL: {sql}\nFirst rows: {rows[:5]!r}"
            )
            tokens += k
            reviews += 1
            if verdict.strip().upper().startswith("ACCEPT"):
                return _draft(sql, question, qtype, rows, reviews, tokens, rejected, t0)
            feedback = (
                f"\nA reviewer asked for changes to {sql!r}: {verdict.partition(':')[2].strip()}"
            )
        return None


def _samples(lake: LakeProfile, table: str, column: str) -> list[Any]:
    return list(lake.table(table).column(column).samples[:5])


def _describe(t: TableProfile) -> str:
    cols = ", ".join(
        f'"{c.name}" {c.kind}{" (stored as text)" if c.needs_cast else ""} e.g. {list(c.samples[:3])!r}'
        for c in t.usable()
    )
    return f'Table "{t.name}" ({t.rows} rows): {cols}'


def _cells(lake: LakeProfile) -> list[tuple[str, str, tuple[str, ...]]]:
    single = [t.name for t in lake.tables if t.usable() and lake.is_subject(t.name)]
    cells = []
    for d in DIFFICULTIES:
        cells += [(d, "single", (t,)) for t in single[:3]]
        cells += [(d, "join", (j.left[0], j.right[0])) for j in lake.joins[:2]]
        cells += [(d, "union", (u.left, u.right)) for u in lake.unions[:2]]
    return cells


def _extract_sql(reply: str) -> str:
    m = re.search(r"```(?:sql)?\s*(.*?)```", reply, re.S | re.I)
    return (m.group(1) if m else reply).strip().rstrip(";").strip()


def _draft(sql, question, asked_qtype, rows, reviews, tokens, rejected, t0) -> Draft:
    """A draft from an accepted pair; difficulty and type as the SQL shows them."""
    ops: list[str] = []
    tables: list[str] = []
    columns: list[str] = []
    ordered = False
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
        checks = [
            ("join", exp.Join),
            ("union", exp.Union),
            ("window", exp.Window),
            ("subquery", exp.Subquery),
            ("cast", exp.Cast),
            ("group", exp.Group),
            ("filter", exp.Where),
            ("order", exp.Order),
            ("aggregate", exp.AggFunc),
        ]
        ops = [name for name, cls in checks if tree.find(cls) is not None]
        tables = sorted({t.name for t in tree.find_all(exp.Table)})
        columns = sorted(
            {f"{c.table}.{c.name}" if c.table else c.name for c in tree.find_all(exp.Column)}
        )
        ordered = isinstance(tree, (exp.Select, exp.Union)) and tree.args.get("order") is not None
    except sqlglot.errors.SqlglotError:
        pass
    qtype = "union" if "union" in ops else ("join" if "join" in ops else "single")
    if {"window", "subquery"} & set(ops):
        difficulty = "challenging"
    elif {"group", "aggregate", "cast"} & set(ops):
        difficulty = "moderate"
    else:
        difficulty = "simple"
    return Draft(
        sql=sql,
        question=" ".join(question.split()),
        difficulty=difficulty,
        qtype=qtype,
        tables=tuple(tables),
        columns=tuple(columns),
        operations=tuple(ops),
        rows=rows,
        ordered=ordered,
        slots={},
        meta={
            "review_count": reviews,
            "tokens": tokens,
            "rejected": rejected,
            "generation_time_s": round(time.perf_counter() - t0, 3),
            "source": "llm",
            "asked_type": asked_qtype,
        },
    )


def connect(config: Any) -> LLMClient:
    """A working client for ``config.llm``; :class:`SynthError` (one line) when the endpoint
    does not answer: a suite asked to go through the LLM is never made offline instead."""
    model, url = parse_spec(config.llm)
    cache = config.llm_cache_dir or Path(config.out) / ".llm-cache"
    client = LLMClient(model, url, cache_dir=cache, max_retries=getattr(config, "llm_retries", 2))
    try:  # (a server that accepts and never answers is as dead as one that refuses)
        client.chat("Reply with OK.", "ping", max_tokens=2, cache=False, deadline_s=PROBE_S)
    except LLMError as e:
        raise SynthError(
            f"--llm {config.llm}: {e}; start the server or fix the URL "
            "(or leave out --llm to synthesize offline)"
        ) from None
    return client


__all__ = ["MAX_SCORED_PAIRS", "LLMClient", "LLMError", "Usage", "connect", "parse_spec"]
