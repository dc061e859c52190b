"""OrQA's question writer and reviewer over every synthesized task (``clarisql synth --llm``).

Contract
- :func:`brief` describes one task for the writer and the reviewer: what kind of request it is
  (well-specified, each underspecification label with its hidden value, the unanswerable kind and
  the requested attribute, a write), the offline template question (the *draft*), the gold SQL
  with its first rows (reads) or the golden actions (writes), what must stay verbatim
  (:attr:`Brief.keep`: label contents, quoted values and numbers the draft names, the attribute
  an unanswerable request asks for) and what must not be said (:attr:`Brief.hide`: every
  clarification value the draft does not already say, the words of an intent label's answer).
- :meth:`QuestionReviewer.review` runs writer -> checks -> reviewer for one task, at most
  ``max_rounds`` rounds. The writer rewrites the draft. A rewrite that is empty or too long,
  drops a kept phrase, says a hidden one, or writes the whole answer into the question
  (:func:`~.verify.echoes_question`) goes back to the writer with the reason (a *check*); the
  reviewer answers ``ACCEPT``, ``REVISE: feedback`` (the writer rewrites with it) or ``REJECT:
  reason`` (the task is dropped). A task never accepted within ``max_rounds`` is dropped. The
  result is the task with the accepted utterance (a write task's instruction, which quotes the
  request, follows it) and ``metadata["llm_review"]``, or ``None``.
- :meth:`QuestionReviewer.review_many` reviews a batch on ``workers`` threads, results in the
  batch's order: a task's outcome depends only on the task and the replies (temperature 0 and
  the client's on-disk cache), so the suite is the same with any number of workers.
- :class:`ReviewStats` counts per category what was written, accepted, revised, rejected,
  never accepted and stopped by a check; :meth:`ReviewStats.lines` is what the suite card says.
- An endpoint failure raises :class:`~.llm.LLMError` (the pipeline stops with one line: a suite
  asked to be LLM-reviewed is never silently half offline; the cache keeps what was done).
"""

from __future__ import annotations

import re
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from clarisql.envs.synth.types import LakeProfile
from clarisql.envs.synth.verify import Verifier, echoes_question
from clarisql.envs.tasks import Task

WRITER = (
    "You rewrite a database request written from a template so that it reads like what a real "
    "user would type. Keep its meaning exactly: the same data, the same filters and values, and "
    "leave unsaid what the kind says is left unsaid. Keep every phrase listed under 'Keep' as "
    "written; never use a phrase listed under 'Never say'. Reply with the request only."
)
REVIEWER = (
    "You review one synthesized text-to-SQL task. Reply ACCEPT if the request reads like a real "
    "user's and means exactly what its kind and its SQL or actions say; REVISE: <what to change> "
    "if rewording can fix it; REJECT: <why> if the task itself is wrong (the SQL does not answer "
    "the request, an unanswerable request can be answered from the schema, an underspecified "
    "request already says what it should leave out)."
)

#: the longest request the writer may return (characters)
MAX_QUESTION_CHARS = 400
#: words that carry no meaning of their own in a hidden intent answer ("I want the total of x")
_STOP = frozenset(
    "a an the of and or in on for to by with i want wants know is are be it its their this that "
    "what which who whose there".split()
)
_QUOTED = re.compile(r'"([^"]{1,120})"')
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_SCOPE_TEXT = {
    "Missing": 'it does not say which {slot} (the user means "{value}")',
    "Error": 'it names the {slot} "{content}", which is wrong (the user means "{value}")',
    "Unmatch": 'it names the {slot} "{content}", which the data does not have (the user means '
    '"{value}")',
    "not-exist": 'it names the {slot} "{content}", which does not exist as written (the user '
    'means "{value}")',
}
_UNANSWERABLE_TEXT = {
    "column-surface": "it asks for {requested}, which no column of the table asked about holds "
    "(another table has a column of that name)",
    "column-related": "it asks for {requested}, which would fit the table but no column holds",
    "column-unrelated": "it asks for {requested}, which nothing in the database is about",
    "non-sql": "it asks for an action outside the database that no SQL query can carry out",
    "out-of-domain": "it has nothing to do with the database",
}


class Chat(Protocol):
    def chat(
        self, system: str, user: str, max_tokens: int = 400, cache: bool = True
    ) -> tuple[str, int]: ...


@dataclass(frozen=True)
class Brief:
    """What the writer and the reviewer are told about one task (see the module docstring)."""

    kind: str
    draft: str
    evidence: str
    keep: tuple[str, ...]
    hide: tuple[str, ...]
    hide_words: tuple[str, ...] = ()
    schema: str = ""
    rows: tuple[tuple[Any, ...], ...] | None = None

    def writer_prompt(self, feedback: str = "") -> str:
        lines = [f"Kind: {self.kind}", f"Draft: {self.draft}", self.evidence]
        if self.keep:
            lines.append("Keep: " + "; ".join(f'"{k}"' for k in self.keep))
        if self.hide or self.hide_words:
            lines.append(
                "Never say: " + "; ".join(f'"{h}"' for h in (*self.hide, *self.hide_words))
            )
        if feedback:
            lines.append(f"Feedback on your last request: {feedback}")
        return "\n".join(lines)

    def reviewer_prompt(self, question: str) -> str:
        lines = [f"Kind: {self.kind}", f"Request: {question}", self.evidence]
        if self.schema:
            lines.append(f"Schema: {self.schema}")
        return "\n".join(lines)


def _has(text: str, phrase: str) -> bool:
    """``phrase`` appears in ``text`` as whole words, ignoring case."""
    p = re.escape(phrase.casefold().strip())
    return bool(p) and re.search(rf"(?<!\w){p}(?!\w)", text.casefold()) is not None


def _schema(lake: LakeProfile, tables: Sequence[str], limit: int = 30) -> str:
    names = list(tables) or [t.name for t in lake.tables]
    parts = []
    for name in names[:limit]:
        try:
            t = lake.table(name)
        except (KeyError, StopIteration, ValueError):
            continue
        parts.append(f"{t.name}({', '.join(c.name for c in t.columns[:40])})")
    return "; ".join(parts)


def brief(task: Task, lake: LakeProfile, v: Verifier | None) -> Brief:
    """The writer's and the reviewer's view of ``task`` (see the module docstring)."""
    draft = " ".join(task.utterance.split())
    meta = task.metadata or {}
    keep: list[str] = []
    hide: list[str] = []
    hide_words: list[str] = []
    rows: tuple[tuple[Any, ...], ...] | None = None
    parts: list[str] = []
    schema = ""
    if task.category.startswith("unanswerable"):
        kind = task.unanswerable_kind or task.category.partition(":")[2]
        requested = str(meta.get("requested") or "")
        text = _UNANSWERABLE_TEXT.get(kind, "the database cannot answer it")
        parts.append(
            f"an unanswerable request ({kind}): {text.format(requested=requested or 'it')}; "
            "it must stay unanswerable"
        )
        if requested:
            keep.append(requested)
        schema = _schema(lake, [])
        evidence = f"What an agent that never abstains would run: {meta.get('naive_sql', '-')}"
    else:
        if task.writable:
            parts.append("a change to the database; the actions carry it out exactly")
        elif task.underspecs:
            parts.append(
                "a deliberately underspecified request; the SQL is the answer once the user has "
                "clarified, and the request must stay unclear on what is listed"
            )
        else:
            parts.append("an answerable question; the SQL's result is exactly its answer")
        for u in task.underspecs:
            lab = u.label
            if lab.kind == "intent":
                parts.append(f'it does not say which figure is wanted (the user means "{u.value}")')
                words = re.findall(r"[A-Za-z]{3,}", u.value)
                hide_words += [w for w in words if w.casefold() not in _STOP and not _has(draft, w)]
            else:
                fmt = _SCOPE_TEXT.get(lab.kind, 'it leaves the {slot} unclear ("{value}")')
                parts.append(fmt.format(slot=lab.slot, content=lab.content, value=u.value))
                if lab.content:
                    keep.append(lab.content)
                if u.value and not _has(draft, u.value):
                    hide.append(u.value)
        if task.writable:
            evidence = "Actions: " + " ; ".join(task.gold_actions)
        else:
            evidence = f"SQL: {task.gold_sql}"
            if v is not None and task.gold_sql:
                got = v.rows(task.gold_sql)
                if got is not None:
                    rows = tuple(tuple(r) for r in got)
                    evidence += f"\nFirst rows: {list(rows[:5])!r}"
        schema = _schema(lake, meta.get("tables") or [])
    keep += [m.group(1) for m in _QUOTED.finditer(draft)]
    keep += [m.group() for m in _NUMBER.finditer(draft)]
    # a kept phrase that is also hidden (a value inside a label's content) is kept: the draft says it
    seen: set[str] = set()
    kept = []
    for k in keep:
        k = k.strip()
        if k and k.casefold() not in seen:
            seen.add(k.casefold())
            kept.append(k)
    hide = [h for h in dict.fromkeys(hide) if h.casefold() not in seen]
    return Brief(
        kind="; ".join(parts),
        draft=draft,
        evidence=evidence,
        keep=tuple(kept),
        hide=tuple(hide),
        hide_words=tuple(dict.fromkeys(hide_words)),
        schema=schema,
        rows=rows,
    )


def check(b: Brief, question: str) -> str | None:
    """Why ``question`` cannot stand for the task (``None``: it passes the checks)."""
    if not question:
        return "the request is empty"
    if len(question) > MAX_QUESTION_CHARS:
        return f"the request is longer than {MAX_QUESTION_CHARS} characters"
    for k in b.keep:
        if not _has(question, k):
            return f'keep "{k}" exactly as written'
    for h in (*b.hide, *b.hide_words):
        if _has(question, h):
            return f'do not say "{h}": the request must leave it unsaid'
    if b.rows and echoes_question([tuple(r) for r in b.rows], question):
        return "the request writes the whole answer into the question"
    return None


def _clean(reply: str) -> str:
    text = " ".join(reply.split())
    text = re.sub(r"^(request|question|rewritten request)\s*:\s*", "", text, flags=re.I)
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


@dataclass
class ReviewStats:
    """Counts per category (see the module docstring)."""

    counts: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, category: str, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[category][what] += n

    def total(self, what: str) -> int:
        return sum(c[what] for c in self.counts.values())

    def lines(self) -> list[str]:
        if not self.counts:
            return []
        cols = ("reviewed", "accepted", "revised", "rejected", "never accepted", "checks failed")
        out = [
            "LLM writer and reviewer: "
            + ", ".join(f"{self.total(c)} {c}" for c in cols)
            + " (rejected and never-accepted tasks were dropped and replaced from spare "
            "candidates where the data had them)"
        ]
        for cat in sorted(self.counts):
            c = self.counts[cat]
            out.append(f"LLM review, {cat}: " + ", ".join(f"{c[k]} {k}" for k in cols))
        return out


class QuestionReviewer:
    """Writer -> checks -> reviewer for every task (see the module docstring)."""

    def __init__(
        self,
        client: Chat,
        lake: LakeProfile,
        verifier: Verifier | None,
        max_rounds: int = 3,
        workers: int = 4,
    ):
        self.client = client
        self.lake = lake
        self.v = verifier
        self.max_rounds = max(1, int(max_rounds))
        self.workers = max(1, int(workers))
        self.stats = ReviewStats()

    def review(self, task: Task) -> Task | None:
        """The task with its accepted request, or ``None`` (rejected / never accepted)."""
        b = brief(task, self.lake, self.v)
        cat = task.category
        self.stats.add(cat, "reviewed")
        feedback, tokens, reviews, checks, revised = "", 0, 0, 0, False
        for _ in range(2 * self.max_rounds):
            if reviews >= self.max_rounds:
                break
            reply, k = self.client.chat(WRITER, b.writer_prompt(feedback))
            tokens += k
            question = _clean(reply)
            why = check(b, question)
            if why is not None:
                checks += 1
                self.stats.add(cat, "checks failed")
                feedback = why
                continue
            verdict, k = self.client.chat(REVIEWER, b.reviewer_prompt(question), max_tokens=200)
            tokens += k
            reviews += 1
            word, _, rest = verdict.strip().partition(":")
            head = word.strip().upper()
            if head.startswith("ACCEPT"):
                self.stats.add(cat, "accepted")
                if revised:
                    self.stats.add(cat, "revised")
                return _rewritten(task, question, b.draft, reviews, checks, tokens)
            if head.startswith("REJECT"):
                self.stats.add(cat, "rejected")
                return None
            revised = True
            feedback = (rest if head.startswith("REVISE") else verdict).strip() or "reword it"
        self.stats.add(cat, "never accepted")
        return None

    def review_many(self, tasks: Sequence[Task]) -> list[Task | None]:
        """:meth:`review` of each task, in order (on ``workers`` threads)."""
        if self.workers < 2 or len(tasks) < 2:
            return [self.review(t) for t in tasks]
        with ThreadPoolExecutor(min(self.workers, len(tasks)), thread_name_prefix="llm") as ex:
            return list(ex.map(self.review, tasks))


def _rewritten(
    task: Task, question: str, draft: str, reviews: int, checks: int, tokens: int
) -> Task:
    meta = dict(task.metadata or {})
    meta["llm_review"] = {"draft": draft, "reviews": reviews, "checks": checks, "tokens": tokens}
    instruction = task.instruction
    if instruction and task.utterance in instruction:
        instruction = instruction.replace(task.utterance, question, 1)
    return replace(task, utterance=question, instruction=instruction, metadata=meta)


__all__ = [
    "MAX_QUESTION_CHARS",
    "REVIEWER",
    "WRITER",
    "Brief",
    "QuestionReviewer",
    "ReviewStats",
    "brief",
    "check",
]
