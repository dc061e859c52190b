"""Explorers: readings come from what the agent sees, never from the gold; a uniform gold over
them leaves every explorer (surface or rank) at chance, where excluding the explorers' picks per
task hands the complementary explorer a win."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from clarisql.envs.explorers import (
    Candidate,
    ambiguous,
    choices,
    contains,
    draw,
    fitting,
    levenshtein,
    one_per_fold,
    rank_picks,
    reach_sql,
    readings,
    resolved_by,
    value_stats,
)


def test_levenshtein() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("same", "same") == 0
    assert levenshtein("kitten", "sitting", bound=1) == 2  # above the bound: bound + 1
    assert levenshtein("abcdefgh", "a", bound=2) == 3


def test_contains_cut_offs_and_left_out_words() -> None:
    assert contains("Acme", "Acme Group")
    assert contains("Riverton Metro Co., Ltd.", "Riverton Metro Partners Co., Ltd.")
    assert contains("济南轨道集团", "济南轨道交通集团有限公司")  # ODUTQA: characters in order
    assert not contains("Acme", "Acme")  # the value itself is no cut-off
    assert not contains("Acme Group", "Group Acme")


def test_nearest_name_resolves_a_misspelling() -> None:
    cands = [Candidate("Riverton"), Candidate("Rivertown"), Candidate("Stonebridge")]
    assert choices("Rivertn", cands)["nearest"] == "Riverton"
    assert readings("Rivertn", cands) == ["Riverton"]  # one reading: no clarification task
    assert not ambiguous("Rivertn", cands, "Riverton")
    assert "nearest" in resolved_by("Rivertn", cands, "Riverton")


def test_misspelling_between_two_values_has_two_readings() -> None:
    assert readings("Bostn", ["Boston", "Bostan", "Denver"]) == ["Boston", "Bostan"]


def test_every_completion_of_a_cut_off_is_a_reading_whatever_its_length() -> None:
    # edit distance would pick the shortest completion: it only measures what was left out
    vals = ["Acme Group", "Acme Holdings International", "Zenith Ltd"]
    assert readings("Acme", vals) == ["Acme Group", "Acme Holdings International"]
    assert ambiguous("Acme", vals, "Acme Holdings International")


def test_a_case_sensitive_lookup_narrows_the_readings() -> None:
    # two values that differ only in capitals: the one holding the surface as written is the
    # reading (GLOB or instr find it), unless both or neither do
    vals = ["Rime Of The Ancient Mariner", "Rime of the Ancient Mariner (Live)", "Run to the Hills"]
    assert readings("Rime Of The", vals) == ["Rime Of The Ancient Mariner"]
    assert not ambiguous("Rime Of The", vals, "Rime Of The Ancient Mariner")
    assert readings("rime of", vals) == vals[:2]  # (written in neither's case: both)
    assert readings("Rime", vals) == vals[:2]  # (both hold it as written)
    # a misspelling too: values that differ only in capitals or accents are ranked by the
    # case- and accent-sensitive edit distance ("Luis" / "Luís" for "Luiz")
    twins = ["Rime Of The Ancient Mariner", "Rime of the Ancient Mariner", "Aces High"]
    assert readings("Rime Of The Ancient Marienr", twins) == [twins[0]]
    assert one_per_fold("Luiz", ["Luis", "Luís", "Lucas"]) == ["Luis", "Lucas"]
    assert one_per_fold("Luíz", ["Luis", "Luís"]) == ["Luís"]


def test_nothing_written_or_nothing_close_every_candidate_but_the_literal() -> None:
    years = [2019, 2020, 2021, 2022]
    assert readings(None, years, literal=2022) == [2019, 2020, 2021]
    assert readings("Northgate", ["Brookfield", "Fairview", "Lakemont"]) == [
        "Brookfield",
        "Fairview",
        "Lakemont",
    ]
    assert fitting("Northgate", ["Brookfield", "Fairview"]) is None


def test_readings_take_no_gold() -> None:
    # the same surface and data give the same readings whichever value is the gold: the gold
    # cannot steer them (the earlier rule kept only the gold's class of each explorer)
    cands = [Candidate("A Group", 1, 9), Candidate("A Holdings", 7, 5), Candidate("A Co", 3, 1)]
    assert readings("A", cands) == ["A Group", "A Holdings", "A Co"]
    assert ambiguous("A", cands, "A Group")  # first row and most frequent pick it: at chance


def _hit_rates(rule: str, n: int = 3000) -> dict[str, float]:
    """Each rank explorer's hit rate on Missing-year parts over four years (latest = literal),
    with the gold chosen by ``rule``: ``uniform`` (now) or ``exclude`` (the earlier rule: a gold
    the first-row or most-frequent explorer would pick is never kept)."""
    rng = random.Random(0)
    cands = [Candidate(y, i + 1, 100 + 10 * i) for i, y in enumerate((2019, 2020, 2021, 2022))]
    reads = readings(None, cands, literal=2022)
    if rule == "exclude":  # first row (2019) and most frequent (2021 among the readings) go
        pool = [r for r in reads if r not in (2019, 2021)]
    else:
        pool = reads
    hits: Counter = Counter()
    for _ in range(n):
        gold = draw(rng, pool)[0]
        for name, pick in rank_picks(None, cands, reads).items():
            hits[name] += pick == gold
    return {k: v / n for k, v in hits.items()}


def test_uniform_gold_leaves_every_rank_explorer_at_chance() -> None:
    rates = _hit_rates("uniform")
    assert max(rates.values()) < 1 / 3 + 0.05  # three readings: chance is 1/3
    assert rates["value-desc-1"] > 1 / 3 - 0.05  # "the second-latest year": a guess


def test_excluding_the_explorers_picks_hands_the_win_to_another_explorer() -> None:
    # the cheat the earlier rule allowed: with the first and the most frequent year excluded,
    # "take the third-latest year" is always right (on builtin: the second-latest, 14 of 18)
    rates = _hit_rates("exclude")
    assert rates["value-desc-2"] == 1.0 and max(rates.values()) == 1.0


def test_draw_is_uniform() -> None:
    rng = random.Random(1)
    firsts = Counter(draw(rng, ["a", "b", "c", "d"])[0] for _ in range(4000))
    assert all(900 <= firsts[v] <= 1100 for v in "abcd")


def test_rank_picks() -> None:
    cands = [Candidate("b", 3, 1), Candidate("a", 2, 5), Candidate("c", 1, 3)]
    p = rank_picks("x", cands, ["a", "b", "c"])
    assert (p["value-asc-1"], p["value-desc-1"], p["value-asc-2"]) == ("a", "c", "b")
    assert (p["first-row-1"], p["last-row"], p["frequent-1"], p["rarest"]) == ("c", "b", "a", "b")
    assert p["value-asc-3"] == "c" and p["frequent-3"] == "b"


def test_value_stats_reads_rowid_and_counts() -> None:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (name TEXT)")
    con.executemany("INSERT INTO t VALUES (?)", [("b",), ("a",), ("b",), ("c",)])
    got = value_stats(lambda q: con.execute(q).fetchall(), "t", "name", ["a", "b", "zz"])
    assert got == [Candidate("a", 2, 1), Candidate("b", 1, 2), Candidate("zz", None, 0)]


_WORD = st.text(alphabet="abcdeAB _%", min_size=1, max_size=9)


@settings(max_examples=150, deadline=None)
@given(vals=st.lists(_WORD, min_size=1, max_size=25, unique=True), surface=_WORD)
def test_reach_sql_reads_every_value_the_surface_fits(vals: list[str], surface: str) -> None:
    # one query over the whole column must find every value the readings would keep
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (v TEXT)")
    con.executemany("INSERT INTO t VALUES (?)", [(v,) for v in vals])
    near = [r[0] for r in con.execute(reach_sql("t", "v", surface))]
    if not surface.strip():
        return
    full, got = fitting(surface, vals), fitting(surface, near)
    assert (full is None) == (got is None)
    assert set(full or []) == set(got or [])
