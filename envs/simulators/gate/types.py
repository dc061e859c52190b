"""The gate's data types: what a question mapper is given (:class:`GateContext`), what it
returns (:class:`MappedQuestion`) and what it is (:class:`QuestionMapper`).

Contract: plain data, no behaviour; every mapper and the gate itself import them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class GateContext:
    """The public facts a mapper may use: the user's request and the schema summary."""

    request: str
    schema: str = ""


@dataclass(frozen=True)
class MappedQuestion:
    """What a question asks about (``aspects``), how sure the mapper is, and who mapped it."""

    aspects: frozenset[str]
    scores: Mapping[str, float] = field(default_factory=dict)
    source: str = "offline"
    specific: bool = True  # the mapper's own verdict (the LLM parser's first stage)


@runtime_checkable
class QuestionMapper(Protocol):
    """Maps a free-text question to the aspects it asks about (see the module docstring)."""

    name: str

    def map(self, question: str, ctx: GateContext) -> MappedQuestion: ...
