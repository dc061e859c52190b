"""What a client sends, checked before anything is built from it: reset options, JSON messages.

Contract
- :func:`check_reset_options` accepts ``seed`` (an integer in ``[0, 2**63)``), ``episode_id``
  (a string of at most 255 characters), ``task_id`` (a task of the suite) and ``task_index``
  (an integer in ``[0, number of tasks)``) and ``dialogue_deltas`` (a boolean: observations
  carry the new dialogue turns only), each possibly ``None``; anything else raises
  :class:`BadRequest` with one line naming the option, and nothing has been opened yet.
- :func:`parse_message` turns one message into a JSON object or a one-line error: never an
  exception (malformed JSON, nesting past :data:`MAX_DEPTH`, more than :data:`MAX_ITEMS`
  values, integers past Python's digit limit, a top level that is not an object). It never
  echoes the message.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

RESET_KEYS = ("seed", "episode_id", "task_id", "task_index", "dialogue_deltas")
#: deepest nesting of lists/objects a message may have (labels are lists of lists of strings)
MAX_DEPTH = 16
#: most values (list items and object entries, all levels) one message may hold: an action
#: holds a few dozen; validating a list of a million costs seconds that no thread can hide
#: (pydantic validates holding the GIL), so the count is checked first, in a Python loop
MAX_ITEMS = 10_000
_MAX_SEED = 2**63


class BadRequest(ValueError):
    """A client's request is malformed (one line, safe to send back)."""


class TaskIds(Protocol):
    count: int
    ids: frozenset[str]


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_reset_options(options: dict[str, Any], tasks: TaskIds) -> None:
    """Raise :class:`BadRequest` unless every reset option is valid for this suite."""
    unknown = sorted(str(k)[:40] for k in options if k not in RESET_KEYS)
    if unknown:
        raise BadRequest(
            f"unknown reset options {unknown[:8]}; expected some of {list(RESET_KEYS)}"
        )
    seed = options.get("seed")
    if seed is not None and not (_int(seed) and 0 <= seed < _MAX_SEED):
        raise BadRequest(f"seed must be an integer in [0, 2**63), got {_brief(seed)}")
    episode_id = options.get("episode_id")
    if episode_id is not None and not (isinstance(episode_id, str) and len(episode_id) <= 255):
        raise BadRequest(
            f"episode_id must be a string of at most 255 characters, got {_brief(episode_id)}"
        )
    task_id = options.get("task_id")
    if task_id is not None:
        if not isinstance(task_id, str) or len(task_id) > 512:
            raise BadRequest(f"task_id must be a task id string, got {_brief(task_id)}")
        if task_id not in tasks.ids:
            raise BadRequest(f"unknown task_id {_brief(task_id)}")
    deltas = options.get("dialogue_deltas")
    if deltas is not None and not isinstance(deltas, bool):
        raise BadRequest(f"dialogue_deltas must be true or false, got {_brief(deltas)}")
    index = options.get("task_index")
    if index is not None and not (_int(index) and 0 <= index < tasks.count):
        raise BadRequest(
            f"task_index must be an integer in [0, {tasks.count}), got {_brief(index)}"
        )


def reset_options(body: Any, tasks: TaskIds) -> dict[str, Any]:
    """The reset keyword arguments in a request body (``None``: none), checked."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise BadRequest(
            "the body must be a JSON object of reset options (seed, task_id, task_index)"
        )
    check_reset_options(body, tasks)
    return {k: v for k, v in body.items() if v is not None}


def _brief(value: Any) -> str:
    """A short description of a client's value (its type, and its text when short)."""
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        text = repr(value) if not _int(value) or value.bit_length() < 200 else "a huge integer"
        return (
            text
            if len(text) <= 60
            else f"a {type(value).__name__} of {len(str(value)) if isinstance(value, str) else len(text)} characters"
        )
    return f"a {type(value).__name__}"


def shape_problem(obj: Any, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS) -> str | None:
    """Why ``obj`` nests too deep or holds too many values, or None (iterative; stops early)."""
    stack = [(obj, 1)]
    items = 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return f"a message may nest lists and objects at most {max_depth} levels deep"
        items += len(children)
        if items > max_items:
            return f"a message may hold at most {max_items} values (list items and fields)"
        stack.extend((v, depth + 1) for v in children)
    return None


#: a JSON string, or one structural character that starts or separates values
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[,\[{]')  # (strings: the unrolled loop)


def too_many_values(text: str | bytes, limit: int = MAX_ITEMS + 16) -> bool:
    """Whether ``text`` has more than ``limit`` value separators and container openings
    outside strings: checked *before* ``json.loads``, which holds the GIL for its whole run
    (0.3 s for a megabyte of one-element lists here), so no thread could hide it. Counting the
    characters is enough when that is under the limit; else strings are skipped (a Python loop
    over matches: other threads run in between)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return False  # (json.loads refuses it at once)
    if text.count(",") + text.count("[") + text.count("{") <= limit:
        return False
    n = 0
    for m in _TOKENS.finditer(text):
        if m.end() - m.start() == 1 and m.group() != '"':
            n += 1
            if n > limit:
                return True
    return False


def parse_message(text: str | bytes) -> dict[str, Any] | str:
    """A JSON object, or a one-line error (see the module docstring)."""
    if too_many_values(text):
        return f"a message may hold at most {MAX_ITEMS} values (list items and fields)"
    try:
        obj = json.loads(text)
    except RecursionError:
        return f"invalid JSON: nested deeper than {MAX_DEPTH} levels"
    except ValueError as e:  # (JSONDecodeError, integer digit limit, bad UTF-8)
        return f"invalid JSON: {str(e)[:160]}"
    if not isinstance(obj, dict):
        return f"a message must be a JSON object, got {type(obj).__name__}"
    problem = shape_problem(obj)
    return problem if problem is not None else obj
