"""Pass@1 is invariant to column order and to stated rounding, and still fails extra columns."""

from __future__ import annotations

from clarisql.rewards.match import execution_match

GOLD = [("Ada", 3, 2.666666), ("Ben", 1, 4.0), ("Cleo", 2, 0.125)]


def test_column_order_does_not_matter() -> None:
    swapped = [(r[2], r[0], r[1]) for r in GOLD]
    assert execution_match(swapped, GOLD)
    assert execution_match(list(reversed(swapped)), GOLD)
    assert execution_match(swapped, GOLD, ordered=True)
    assert not execution_match(list(reversed(swapped)), GOLD, ordered=True)


def test_a_permutation_must_keep_rows_together() -> None:
    # each column holds the gold's values, but the rows pair them differently: not the answer
    gold = [(1, "a"), (2, "b")]
    assert not execution_match([("b", 1), ("a", 2)], gold)
    assert execution_match([("a", 1), ("b", 2)], gold)


def test_extra_or_missing_columns_still_fail() -> None:
    assert not execution_match([(*r, 0) for r in GOLD], GOLD)
    assert not execution_match([r[:2] for r in GOLD], GOLD)
    assert not execution_match([(r[0], r[0], r[1], r[2]) for r in GOLD], GOLD)


def test_rounding_to_two_or_more_decimals_passes() -> None:
    rounded = [(r[0], r[1], round(r[2], 2)) for r in GOLD]
    assert execution_match(rounded, GOLD)
    assert execution_match([(r[0], r[1], round(r[2], 3)) for r in GOLD], GOLD)
    assert execution_match(GOLD, rounded)  # a gold written as ROUND(x, 2), full precision
    # one decimal or a whole number is beyond the stated tolerance
    assert not execution_match([(r[0], r[1], round(r[2], 1)) for r in GOLD], GOLD)
    assert not execution_match([("Ada", 3, 3.0), *GOLD[1:]], GOLD)
    assert not execution_match([("Ada", 3, 2.68), *GOLD[1:]], GOLD)  # wrongly rounded
    assert not execution_match(rounded, GOLD, round_digits=0)  # switched off


def test_rounding_and_column_order_together_and_old_records_rescore() -> None:
    from clarisql.rewards.record import EpisodeRecord
    from clarisql.rewards.reliability import is_correct

    pred = [(round(r[2], 2), r[1], r[0]) for r in GOLD]
    assert execution_match(pred, GOLD)
    # a saved record holds both row lists: rescoring it applies the rule
    rec = EpisodeRecord(task_id="t", category="well-specified", answerable=True, writable=False)
    rec.answer_rows, rec.gold_rows = [list(r) for r in pred], [list(r) for r in GOLD]
    rec.end = "stop"
    assert is_correct(rec)
