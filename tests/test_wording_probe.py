"""The wording probe must catch a planted leak and must not see one in a minimal-pair suite."""

from __future__ import annotations

import random

import pytest

from ._benchmarks import bench

pytest.importorskip("sklearn")

wp = bench("wording_probe")

ATTRS = [f"attr{i}" for i in range(40)]
NAMES = [f"name{i}" for i in range(40)]


def _texts(rng: random.Random, n: int, leak: str | None) -> list[str]:
    out = []
    for _ in range(n):
        t = f"What was the {rng.choice(ATTRS)} of {rng.choice(NAMES)} in {rng.randint(2000, 2030)}?"
        out.append(t if leak is None else f"{t} {leak}")
    return out


def test_probe_catches_a_planted_leak() -> None:
    rng = random.Random(0)
    r = wp.probe_texts(
        _texts(rng, 60, "please"),
        _texts(rng, 60, None),
        _texts(rng, 40, "please"),
        _texts(rng, 40, None),
    )
    assert r["pairs"] >= 0.95 and r["all"] >= 0.95


def test_probe_at_chance_on_minimal_pairs() -> None:
    rng = random.Random(1)
    r = wp.probe_texts(
        _texts(rng, 80, None), _texts(rng, 80, None), _texts(rng, 60, None), _texts(rng, 60, None)
    )
    assert r["pairs"] <= 0.65 and r["all"] <= 0.65


def test_look_alikes_pick_the_twin() -> None:
    pos = ["What was the gross profit of Acme in 2020?", "Write a poem about Avon."]
    neg = ["How many sales were recorded in Avon?", "What was the net profit of Acme in 2020?"]
    assert wp.look_alikes(pos, neg) == [(pos[0], neg[1])]  # the other two share too few words
    assert wp.look_alikes(pos, neg, 0.0) == [(pos[0], neg[1]), (pos[1], neg[0])]


def test_surface_cheat_sees_what_words_cannot() -> None:
    """A leak in the shape of the quoted value (one word vs three), with every word seen on both
    sides: the bag of words is blind to it, the surface tree and the one-word rule are not."""
    rng = random.Random(2)

    def texts(n: int, short: bool) -> list[str]:
        out = []
        for _ in range(n):
            a, b, c = rng.sample(NAMES, 3)
            v = a if short else f"{a} {b} {c}"
            out.append(f'What was the {rng.choice(ATTRS)} of "{v}"?')
        return out

    r = wp.surface_cheat(texts(60, True), texts(60, False), texts(40, True), texts(40, False))
    assert r["all"] >= 0.95 and r["one-word-rule"] >= 0.95
