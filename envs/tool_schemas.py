"""The agent's actions as OpenAI-style function tools (JSON schemas), one list for every user.

``TOOL_SCHEMAS`` holds ``ask_user``, ``execute_sql``, ``abstain``, ``stop`` and
``search_tables`` in the ``{"type": "function", "function": {name, description, parameters}}``
form that OpenAI-compatible servers, chat templates (``tools=``), TRL, verifiers and SkyRL take.
:func:`tool_schemas` gives the ones an episode offers (``search_tables`` only with table search
on). The names are :data:`clarisql.envs.actions.TOOL_NAMES`; a call's arguments are what
:func:`clarisql.envs.actions.parse_action` takes as ``{"name": ..., "arguments": ...}``.
"""

from __future__ import annotations

import copy
from typing import Any

from clarisql.envs.actions import TOOL_NAMES

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "ask_user",
            "description": "Ask the user a clarification question and name what is underspecified.",
            "parameters": {
                "type": "object",
                "properties": {
                    "question": {"type": "string"},
                    "labels": {
                        "type": "array",
                        "description": "'intent', or [content, slot, kind] with kind "
                        "Missing, Error, Unmatch (FROM scope) or not-exist (WHERE value)",
                        "items": {
                            "anyOf": [
                                {"type": "string"},
                                {
                                    "type": "array",
                                    "items": {"type": "string"},
                                    "minItems": 3,
                                    "maxItems": 3,
                                },
                            ]
                        },
                    },
                },
                "required": ["question"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "execute_sql",
            "description": "Run one SQL statement on the database.",
            "parameters": {
                "type": "object",
                "properties": {"sql": {"type": "string"}},
                "required": ["sql"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "abstain",
            "description": "Declare that the request cannot be answered from the database.",
            "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "stop",
            "description": "Finish; sql is the final query whose result is the answer "
            "(omit it to use the last successful query).",
            "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_tables",
            "description": "Find the database tables that match words of the request "
            "(BM25 over table names, columns and sample values); shows their columns.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "k": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
            },
        },
    },
)
assert {t["function"]["name"] for t in TOOL_SCHEMAS} == set(TOOL_NAMES.values())

#: the four tools every episode offers (``search_tables`` is optional)
BASE_TOOLS = ("ask_user", "execute_sql", "abstain", "stop")


def tool_schemas(table_search: bool = False) -> list[dict[str, Any]]:
    """Deep copies of the schemas an episode offers: the four base tools, and
    ``search_tables`` when table search is on."""
    names = BASE_TOOLS + (("search_tables",) if table_search else ())
    by_name = {t["function"]["name"]: t for t in TOOL_SCHEMAS}
    return [copy.deepcopy(by_name[n]) for n in names]
