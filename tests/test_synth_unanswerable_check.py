"""Unanswerable only when no column could hold the attribute: checked against every column
(short names, words for names, synonyms, sample values, the embedder); non-sql only for what no
SQL-and-text agent can do."""

from __future__ import annotations

import pytest

from clarisql.envs.synth.layers import unanswerable as un
from clarisql.envs.synth.names import in_words, speakable
from clarisql.envs.synth.types import ColumnProfile, TableProfile


def _c(name: str, kind: str = "integer", samples: tuple = ()) -> ColumnProfile:
    return ColumnProfile("t", name, "", kind, False, 10, 10, 0.0, samples, None, None, False, False)


TEAMS = TableProfile(
    "teams",
    10,
    (
        _c("teamID", "text"),
        _c("G"),
        _c("alt", "real"),
        _c("franchName", "text", ("Boston Red Sox",)),
        _c("notes", "text", ("played in the rain delay season",)),
        _c("pay_usd"),
    ),
)


@pytest.mark.parametrize(
    "attr",
    ["games", "height", "elevation", "franchise name", "rain delay", "salary", "wage"],
)
def test_an_attribute_some_column_may_hold_is_not_unanswerable(attr: str) -> None:
    assert not un.absent(attr, [TEAMS])


@pytest.mark.parametrize("attr", ["blood type", "horsepower", "melting point", "tax rate"])
def test_an_attribute_no_column_holds_is_unanswerable(attr: str) -> None:
    assert un.absent(attr, [TEAMS])


def test_the_embedder_is_consulted_when_the_words_differ() -> None:
    calls = []

    def semantic(a: str, b: str) -> bool:
        calls.append((a, b))
        return a == "moniker" and b == "franch name"

    assert un.absent("moniker", [TEAMS])
    assert not un.absent("moniker", [TEAMS], semantic)
    assert ("moniker", "franch name") in calls


def test_names_in_words_and_unspeakable_names() -> None:
    assert in_words("franchName") == "franch name"
    assert in_words("qty_sold") == "quantity sold" and in_words("weight_kg") == "weight in kg"
    assert in_words("playerID") == "player ID" and in_words("dob") == "date of birth"
    assert not speakable("G") and not speakable("e") and not speakable("HR")
    assert speakable("games") and speakable("birthCity") and speakable("alt")


def test_a_span_s_end_is_said_as_its_noun() -> None:
    # ("List the different dates to of the customer addresses" read no better than a name)
    assert in_words("date_from") == "start date" and in_words("DateTo") == "end date"
    assert in_words("date_assigned_to") == "assigned end date"
    assert in_words("dt_from") == "start date" and in_words("time_until") == "end time"
    # without a point in time the last word is no span's end: a bill-to address
    assert in_words("bill_to") == "bill to" and in_words("valid_from") == "valid from"


def test_non_sql_asks_only_what_no_sql_and_text_agent_can_do() -> None:
    pool = " ".join(un._NONSQL_MEASURE + un._NONSQL_TEXT).lower()
    for doable in ("translate", "aloud", "poem", "summarise", "forecast"):
        assert doable not in pool
