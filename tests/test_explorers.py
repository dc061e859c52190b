"""Explorers: a reading some explorer can pick is not ambiguous; a tie none can break is."""

from __future__ import annotations

import sqlite3

from clarisql.envs.explorers import (
    Candidate,
    ambiguous,
    choices,
    levenshtein,
    resolved_by,
    unrankable,
    value_stats,
)


def test_levenshtein() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("same", "same") == 0


def test_nearest_name_resolves_a_misspelling() -> None:
    cands = [Candidate("Riverton"), Candidate("Stonebridge")]
    assert choices("Rivertn", cands)["nearest"] == "Riverton"
    assert not ambiguous("Rivertn", cands, "Riverton")
    assert "nearest" in resolved_by("Rivertn", cands, "Riverton")


def test_single_prefix_completion_resolves() -> None:
    cands = [Candidate("Harbour View"), Candidate("Lakeside"), Candidate("Old Town")]
    assert choices("Har", cands)["prefix"] == "Harbour View"
    assert not ambiguous("Har", cands, "Harbour View")


def test_first_row_and_most_frequent_resolve() -> None:
    cands = [Candidate("A Group", 1, 5), Candidate("A Holdings", 7, 5)]
    assert choices(None, cands)["first-row"] == "A Group"
    assert not ambiguous(None, cands, "A Group")  # first-row picks it
    cands = [Candidate("A Group", None, 9), Candidate("A Holdings", None, 5)]
    assert not ambiguous(None, cands, "A Group")  # most-frequent picks it


def test_a_tie_no_explorer_breaks_is_ambiguous() -> None:
    # two completions of the same cut-off name, same distance, same counts, no row order
    cands = [Candidate("Acme Group"), Candidate("Acme Homes"), Candidate("Zenith Ltd")]
    assert choices("Acme", cands)["nearest"] is None
    assert unrankable("Acme", cands, "Acme Group") == ["Acme Group", "Acme Homes"]
    assert ambiguous("Acme", cands, "Acme Homes")


def test_gold_not_picked_but_alone_on_its_side_is_not_ambiguous() -> None:
    # the explorer picks the other of two: "take the runner-up" would find the gold
    cands = [Candidate("Bolt", 1, 3), Candidate("Boltz", 2, 3)]
    assert not ambiguous(None, cands, "Boltz")


def test_value_stats_reads_rowid_and_counts() -> None:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (name TEXT)")
    con.executemany("INSERT INTO t VALUES (?)", [("b",), ("a",), ("b",), ("c",)])
    got = value_stats(lambda q: con.execute(q).fetchall(), "t", "name", ["a", "b", "zz"])
    assert got == [Candidate("a", 2, 1), Candidate("b", 1, 2), Candidate("zz", None, 0)]
