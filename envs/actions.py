"""Agent actions: structured dicts, and the canonical text format an LLM can produce.

Structured form (what :meth:`ClarifySQLEnv.step` takes)::

    {"type": "clarify", "question": str, "labels": [label, ...]}   # label: "intent" or
                                                                     # [content, slot, kind]
    {"type": "execute", "sql": str}
    {"type": "abstain", "reason": str}
    {"type": "stop", "sql": str | None}   # sql: the final query; None = last successful result
    {"type": "search_tables", "query": str, "k": int}   # BM25 table search (default k 5)

Canonical text form (a tool call, as chat templates with tool calling emit it)::

    <tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}</tool_call>

with tool names ``ask_user`` (question, labels), ``execute_sql`` (sql), ``abstain`` (reason)
and ``stop`` (sql). Parsing is tolerant: the tags may be missing, the JSON may sit in a code
fence, ``{"type": ...}`` dicts work as text too, and a bare ```sql fence means execute. The first
action in a text is taken. Anything unusable raises :class:`ActionError` with a message meant for
the agent.

Parsing is total and linear in the input: every input, however malformed (deep JSON nesting,
integers too long to convert, degenerate white space, megabytes of junk), either parses or raises
:class:`ActionError`; tags and fences are found with ``str.find`` (no backtracking regular
expressions), at most :data:`MAX_JSON_CANDIDATES` ``{`` positions (and as many code fences) are
tried as JSON objects, and
text longer than :data:`MAX_ACTION_CHARS` is refused up front.
"""

from __future__ import annotations

import json
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.tasks import Label

ACTION_TYPES = ("clarify", "execute", "abstain", "stop", "search_tables")
TOOL_NAMES = {
    "clarify": "ask_user",
    "execute": "execute_sql",
    "abstain": "abstain",
    "stop": "stop",
    "search_tables": "search_tables",
}
_ALIASES = {
    "clarify": "clarify",
    "ask_user": "clarify",
    "ask": "clarify",
    "ask_clarification": "clarify",
    "clarification": "clarify",
    "question": "clarify",
    "execute": "execute",
    "execute_sql": "execute",
    "sql": "execute",
    "run_sql": "execute",
    "query": "execute",
    "abstain": "abstain",
    "refuse": "abstain",
    "stop": "stop",
    "submit": "stop",
    "final_answer": "stop",
    "answer": "stop",
    "finish": "stop",
    "done": "stop",
    "search_tables": "search_tables",
}


#: Longest action text parsed (longer text is an invalid action).
MAX_ACTION_CHARS = 1_000_000
#: Longest message to the user (a clarify question); the user simulator reads every character.
MAX_QUESTION_CHARS = 8_000
#: How many ``{`` positions of a text are tried as the start of a JSON object.
MAX_JSON_CANDIDATES = 64
#: How many JSON parse attempts one text gets in all (over its tool call, fences and body), so a
#: text's parse costs at most this many linear scans, whatever its shape.
MAX_JSON_TRIES = 64
#: Most labels one clarification may carry (a real one names a few; each is checked and shown).
MAX_LABELS = 64
#: Longest ``search_tables`` query and ``abstain`` reason.
MAX_QUERY_CHARS = 2_000
MAX_REASON_CHARS = 8_000
_SHORT = reprlib.Repr()
_SHORT.maxstring = 80
_SHORT.maxother = 80


def safe_repr(x: Any, limit: int = 200) -> str:
    """A short ``repr`` that never raises (deep nesting, huge integers, broken ``__repr__``)."""
    try:
        text = _SHORT.repr(x)
    except Exception:  # RecursionError, ValueError (int too long to convert), user __repr__
        text = f"<{type(x).__name__}>"
    return text[:limit]


class ActionError(ValueError):
    """The action could not be understood; the message says why (shown to the agent)."""


class NoActionFound(ActionError):
    """Text with no action in it (no tool call, no action JSON, no SQL fence)."""


@dataclass
class Action:
    type: str
    question: str = ""
    labels: list[Label] = field(default_factory=list)
    sql: str | None = None
    reason: str = ""
    query: str = ""
    k: int = 5

    def to_dict(self) -> dict[str, Any]:
        if self.type == "clarify":
            return {
                "type": "clarify",
                "question": self.question,
                "labels": [lb.to_json() for lb in self.labels],
            }
        if self.type == "execute":
            return {"type": "execute", "sql": self.sql}
        if self.type == "abstain":
            return {"type": "abstain", "reason": self.reason}
        if self.type == "search_tables":
            return {"type": "search_tables", "query": self.query, "k": self.k}
        return {"type": "stop", "sql": self.sql}

    def to_text(self) -> str:
        """The canonical text form (round-trips through :func:`parse_action`)."""
        if self.type == "execute" and type(self.sql) is str:
            # the same text as below (the encoder's separators), without the dicts: every step
            # of a served episode makes it, on cold caches
            return _EXECUTE_TEXT + _TEXT_JSON.encode(self.sql) + "}}</tool_call>"
        d = self.to_dict()
        kind = d.pop("type")
        if kind == "stop" and d.get("sql") is None:
            d = {}
        return (
            "<tool_call>"
            + _TEXT_JSON.encode({"name": TOOL_NAMES[kind], "arguments": d})
            + "</tool_call>"
        )


_LANG = re.compile(r"\w*")

#: json.dumps(..., ensure_ascii=False) builds an encoder per call (most of to_text's cost)
_TEXT_JSON = json.JSONEncoder(ensure_ascii=False)
_EXECUTE_TEXT = (
    '<tool_call>{"name": ' + _TEXT_JSON.encode(TOOL_NAMES["execute"]) + ', "arguments": {"sql": '
)


def _text_sql(sql: Any, what: str) -> Any:
    if isinstance(sql, (bytes, bytearray)):
        try:
            return bytes(sql).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ActionError(
                f"{what}: 'sql' is not valid UTF-8 ({e.reason} at byte {e.start})"
            ) from None
    return sql


def _from_mapping(d: dict[str, Any]) -> Action:
    if "name" in d and "type" not in d:
        args = d.get("arguments", d.get("args", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                raise ActionError(
                    "tool-call 'arguments' is a string that is not valid JSON"
                ) from None
        if not isinstance(args, dict):
            raise ActionError("tool-call 'arguments' must be an object")
        d = {"type": d["name"], **args}
    kind = d.get("type", d.get("action"))
    if not isinstance(kind, str):
        raise ActionError(f"action needs a 'type' (one of {', '.join(ACTION_TYPES)})")
    t = _ALIASES.get(kind.strip().lower())
    if t is None:
        raise ActionError(
            f"unknown action type {safe_repr(kind)}: expected one of {', '.join(ACTION_TYPES)}"
        )
    if t == "clarify":
        q = d.get("question", d.get("text", ""))
        if not isinstance(q, str):
            raise ActionError("clarify: 'question' must be a string")
        if len(q) > MAX_QUESTION_CHARS:
            raise ActionError(
                f"clarify: the question is longer than {MAX_QUESTION_CHARS} characters"
            )
        raw = d.get("labels", [])
        if raw is None:
            raw = []
        if isinstance(raw, (str, dict)) or (
            isinstance(raw, list)
            and len(raw) == 3
            and all(isinstance(x, str) for x in raw)
            and raw[0] != "intent"
            and raw[2].strip().lower() in ("missing", "error", "unmatch", "not-exist")
        ):
            raw = [raw]
        if not isinstance(raw, list):
            raise ActionError(
                "clarify: 'labels' must be a list of labels ('intent' or [content, slot, kind])"
            )
        if len(raw) > MAX_LABELS:  # refused before any is parsed
            raise ActionError(f"clarify: at most {MAX_LABELS} labels, got {len(raw)}")
        labels = []
        for item in raw:
            try:
                labels.append(Label.parse(item))
            except ValueError as e:
                raise ActionError(f"clarify: {e}") from None
        if not q.strip() and not labels:
            raise ActionError("clarify: give a 'question' (and the 'labels' you detected)")
        return Action("clarify", question=q, labels=labels)
    if t == "execute":
        sql = _text_sql(d.get("sql", d.get("query")), "execute")
        if not isinstance(sql, str):
            raise ActionError("execute: 'sql' must be a string")
        return Action("execute", sql=sql)
    if t == "search_tables":
        q = d.get("query", d.get("q", ""))
        if isinstance(q, str) and len(q) > MAX_QUERY_CHARS:
            raise ActionError(
                f"search_tables: the query is longer than {MAX_QUERY_CHARS} characters"
            )
        return _search_action(d)
    if t == "abstain":
        r = d.get("reason", "")
        if isinstance(r, str) and len(r) > MAX_REASON_CHARS:
            raise ActionError(f"abstain: the reason is longer than {MAX_REASON_CHARS} characters")
        return Action("abstain", reason=r if isinstance(r, str) else safe_repr(r, 2000))
    sql = _text_sql(d.get("sql", d.get("query")), "stop")
    if sql is not None and not isinstance(sql, str):
        raise ActionError("stop: 'sql' must be a string or null")
    if isinstance(sql, str) and not sql.strip():
        sql = None
    return Action("stop", sql=sql)


#: The most tables one ``search_tables`` action may ask for.
SEARCH_MAX_K = 20


def _search_action(d: dict[str, Any]) -> Action:
    """An ``Action("search_tables", query=..., k=...)`` from a parsed mapping, or ActionError."""
    q = d.get("query", d.get("q", ""))
    if not isinstance(q, str) or not q.strip():
        raise ActionError("search_tables: 'query' must be a non-empty string")
    k = d.get("k", 5)
    if isinstance(k, str) and k.strip().isdigit():
        k = int(k)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= SEARCH_MAX_K:
        raise ActionError(f"search_tables: 'k' must be an integer from 1 to {SEARCH_MAX_K}")
    return Action("search_tables", query=q.strip(), k=k)


_OPEN_TAG, _CLOSE_TAG = "<tool_call>", "</tool_call>"


def _tool_call_body(text: str) -> str | None:
    """What the first ``<tool_call>`` holds (up to ``</tool_call>`` or the end), or None."""
    i = text.find(_OPEN_TAG)
    if i < 0:
        return None
    i += len(_OPEN_TAG)
    j = text.find(_CLOSE_TAG, i)
    return text[i : j if j >= 0 else len(text)].strip()


def _fences(text: str, limit: int = MAX_JSON_CANDIDATES) -> list[tuple[str, str]]:
    """The first ``limit`` code fences as ``(language, body)``: text between successive pairs of
    triple backticks (the pairs a ```` ```(\\w*)\\s*(.*?)``` ```` scan finds), in one pass."""
    parts = text.split("```", 2 * limit)
    out = []
    for part in parts[1:-1:2]:  # odd parts sit between an opening and a closing fence
        lang = _LANG.match(part, 0, 64).group()  # (a language tag is short: scanned in C)
        out.append((lang, part[len(lang) :].strip()))
    return out


class _Budget:
    """JSON parse attempts left for one text (see :data:`MAX_JSON_TRIES`)."""

    def __init__(self) -> None:
        self.left = MAX_JSON_TRIES


def _first_json_object(text: str, budget: _Budget | None = None) -> Any:
    """The first JSON object in ``text`` starting at one of its first few ``{``; None if none."""
    dec = json.JSONDecoder()
    budget = budget or _Budget()
    i = text.find("{")
    tries = 0
    while i >= 0 and tries < MAX_JSON_CANDIDATES and budget.left > 0:
        tries += 1
        budget.left -= 1
        try:
            obj, _ = dec.raw_decode(text, i)
        except (ValueError, RecursionError):  # bad JSON, too-long integers, too deep nesting
            obj = None
        if isinstance(obj, dict):
            return obj
        i = text.find("{", i + 1)
    return None


def _parse_text(text: str) -> Action:
    budget = _Budget()
    body = _tool_call_body(text)
    if body is not None:
        obj = _first_json_object(body, budget)
        if obj is None:
            raise ActionError("the <tool_call> block does not hold a JSON object")
        return _from_mapping(obj)
    fences = _fences(text)
    for body in [body for lang, body in fences if lang.lower() in ("json", "")]:
        obj = _first_json_object(body, budget)
        if obj is not None:
            return _from_mapping(obj)
    obj = _first_json_object(text, budget)
    if obj is not None and ("type" in obj or "name" in obj or "action" in obj):
        return _from_mapping(obj)
    for lang, body in fences:
        if lang.lower() == "sql" and body:
            return Action("execute", sql=body)
    raise NoActionFound(
        "could not find an action: reply with one tool call, e.g. "
        '<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT ..."}}</tool_call>'
    )


def parse_action(action: Any) -> Action:
    """Parse a structured dict, an :class:`Action` or text into an :class:`Action`.

    Total: raises :class:`ActionError` (never anything else) for input it cannot use.
    """
    try:
        return _parse(action)
    except ActionError:
        raise
    except (RecursionError, ValueError, TypeError, AttributeError, OverflowError, MemoryError) as e:
        # deep nesting, too-long integers, odd key types in a structured action
        raise ActionError(f"malformed action ({type(e).__name__})") from None


def _parse(action: Any) -> Action:
    if isinstance(action, Action):
        return action
    if isinstance(action, dict):
        return _from_mapping(action)
    if isinstance(action, (bytes, bytearray)):
        try:
            action = bytes(action).decode("utf-8")
        except UnicodeDecodeError:
            raise ActionError("action text is not valid UTF-8") from None
    if isinstance(action, str):
        if len(action) > MAX_ACTION_CHARS:
            raise ActionError(f"action text is longer than {MAX_ACTION_CHARS} characters")
        if not action.strip():
            raise ActionError("empty action")
        return _parse_text(action)
    raise ActionError(f"an action must be a dict or text, got {type(action).__name__}")


ACTION_FORMAT_HELP = """\
Reply with exactly one tool call per turn:
<tool_call>{"name": "ask_user", "arguments": {"question": "...", "labels": [...]}}</tool_call>
    labels name what is underspecified: "intent" (what to return is unclear),
    [content, slot, kind] with kind Missing, Error or Unmatch for the scope (FROM: which city,
    district or year table), or [content, slot, "not-exist"] for a WHERE value that does not exist
    as written (slot e.g. enterprise, project). content is the text as the user wrote it ("" if missing).
<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT ..."}}</tool_call>
<tool_call>{"name": "abstain", "arguments": {"reason": "..."}}</tool_call>   (the request cannot be answered from the database)
<tool_call>{"name": "stop", "arguments": {"sql": "SELECT ..."}}</tool_call>  (sql: the final query whose result is the answer; omit it to use the last successful query)"""
