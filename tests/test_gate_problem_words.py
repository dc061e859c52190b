"""The words that state a problem are not things asked about.

"What is the full name of 'Chico'?" names one value and states its problem. Counted as asking
about the schema's ``Name`` column too, and about a catalog aspect an embedding mapper inferred
from "full name", it passed the "one thing at a time" bound and the precise question was refused.
"""

from __future__ import annotations

from clarisql.envs.simulators.gate import GateRules, asked_aspects, vagueness
from clarisql.envs.simulators.gate.types import GateContext, MappedQuestion

SCHEMA = (
    "Database tables:\n"
    "tracks(TrackId INTEGER, Name NVARCHAR(200), Composer NVARCHAR(220), Milliseconds INTEGER)"
)
CTX = GateContext(
    request='Give me the main number on the tracks with composer "Chico".', schema=SCHEMA
)
# what an embedding mapper returned for the question: a catalog aspect no word of it names
MAPPED = MappedQuestion(aspects=frozenset({"enterprise"}), scores={"enterprise": 0.669})


def test_a_value_with_its_problem_is_one_thing() -> None:
    q = "What is the full name of 'Chico'?"
    assert asked_aspects(q, MAPPED, CTX) == frozenset()
    assert vagueness(q, MAPPED, CTX, GateRules()) is None


def test_the_bound_still_counts_what_is_asked_about() -> None:
    q = "What is the full name of 'Chico', and which composer and which track name do you mean?"
    assert vagueness(q, MAPPED, CTX, GateRules()) is not None
    # without a problem stated, the aspects are counted as before
    plain = "Which composer and which track name do you mean?"
    assert asked_aspects(plain, MAPPED, CTX) == asked_aspects(plain, MAPPED, CTX) | {"enterprise"}
