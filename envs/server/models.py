"""Pydantic wire types (OpenEnv ``Action`` / ``Observation`` / ``State`` subclasses).

An action is either the structured dict of :mod:`clarisql.envs.actions` (``type`` plus its
fields) or ``text``: the raw tool-call text an LLM wrote, parsed by the env exactly as
in-process. Field types are loose on purpose: a wrong action *type* or missing field is the
env's business (an invalid-action observation, as in-process), not a transport error.
"""

from __future__ import annotations

import math
from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class ClarisqlAction(Action):
    """One agent action: the env's dict form, or ``text`` (tool-call text)."""

    type: str | None = Field(default=None, description="clarify | execute | abstain | stop | ...")
    question: str | None = None
    labels: list[Any] | None = None
    sql: str | None = None
    reason: str | None = None
    query: str | None = None
    k: int | None = None
    text: str | None = Field(default=None, description="raw tool-call text, parsed by the env")

    def to_env_action(self) -> dict[str, Any] | str:
        """What ``ClarifySQLEnv.step`` receives for this action."""
        if self.text is not None:
            return self.text
        # the fields as given (what model_dump(exclude=...) gives, without its per-call cost)
        d = self.__dict__
        return {k: d[k] for k in _ENV_FIELDS if d.get(k) is not None}


_ENV_FIELDS = ("type", "question", "labels", "sql", "reason", "query", "k")


class ClarisqlObservation(Observation):
    """The Gymnasium observation plus ``truncated`` and ``info`` (``reward``/``done`` inherited).

    Whole by default. With the reset option ``dialogue_deltas=True`` (clarisql's clients):
    ``db_schema`` (the observation's ``schema``) is sent with ``reset`` only and empty on
    steps: it is fixed for the whole episode, and resending ~18k characters every step tripled
    the step's cost (:class:`~clarisql.envs.server.client.RemoteClarifySQLEnv` fills it back
    in); and ``dialogue`` is the dialogue from character ``dialogue_start`` on: the whole
    dialogue on ``reset`` (``dialogue_start == 0``), and on a step only what the step added to
    the previous observation's dialogue (``dialogue_start`` = that dialogue's length), so a
    step costs O(what it added), not O(the whole dialogue so far). The full dialogue is
    ``previous[:dialogue_start] + dialogue``; both clients rebuild it.
    """

    db_schema: str = ""
    dialogue: str = ""
    dialogue_start: int = 0
    last: str = ""
    turn: int = 0
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict)


#: every field, in declaration order: what :func:`construct_observation` is given
OBSERVATION_FIELDS = tuple(ClarisqlObservation.model_fields)
_FIELDS_SET = frozenset(OBSERVATION_FIELDS)
# The direct construction below is what ``model_construct`` does for a model with no private
# attributes and no extra fields, given every field; it is used only for such a model.
_DIRECT = (
    not ClarisqlObservation.__private_attributes__
    and ClarisqlObservation.model_config.get("extra") != "allow"
)
_new = object.__new__
_set = object.__setattr__


def construct_observation(values: dict[str, Any]) -> ClarisqlObservation:
    """An observation from ``values`` (every field of :data:`OBSERVATION_FIELDS`, already of its
    type: nothing is validated), as ``ClarisqlObservation.model_construct(**values)`` makes it.

    ``model_construct`` walks the model's fields and defaults on every call (~3 µs hot, 3-4x
    that on a server's cold caches); a step gives every field, so the dict is used as it is.
    """
    if not _DIRECT or len(values) != len(OBSERVATION_FIELDS):
        return ClarisqlObservation.model_construct(**values)
    obs = _new(ClarisqlObservation)
    _set(obs, "__dict__", values)
    _set(obs, "__pydantic_fields_set__", set(_FIELDS_SET))
    _set(obs, "__pydantic_extra__", None)
    _set(obs, "__pydantic_private__", None)
    return obs


class ClarisqlState(State):
    """Where the session's episode stands (no hidden gold facts)."""

    suite: str = ""
    task_id: str | None = None
    turn: int = 0
    done: bool = False


_PLAIN = frozenset({str, bool, int, type(None)})


def jsonable(obj: Any) -> Any:
    """``obj`` with every value JSON-safe: tuples to lists, non-finite floats to None, bytes to
    hex, sets sorted, objects with ``to_dict`` converted, anything else to ``str``."""
    t = type(obj)
    if t in _PLAIN:
        return obj
    if t is dict:  # the common case (an info dict), without a call per plain value
        return {
            (k if type(k) is str else str(k)): (v if type(v) in _PLAIN else jsonable(v))
            for k, v in obj.items()
        }
    if obj is None or isinstance(obj, (str, bool, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj).hex()
    if isinstance(obj, (set, frozenset)):
        return [jsonable(v) for v in sorted(obj, key=repr)]
    if hasattr(obj, "to_dict"):
        return jsonable(obj.to_dict())
    return str(obj)
