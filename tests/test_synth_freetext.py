"""`clarisql synth` over a source with a free-text column: SUQL tasks (ANSWER/SUMMARY in gold SQL).

The lake is a CSV folder this test writes (support tickets with agents' notes); tasks are scored
by the real environment with the offline SUQL backend.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.synth.ingest import ingest
from clarisql.envs.synth.layers.freetext import freetext_tasks, phrases
from clarisql.envs.synth.pipeline import SynthConfig, synthesize
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import load_tasks
from clarisql.policies import make_policy
from clarisql.rollouts.episode import run_episode
from tests._freetext_lake import write_ticket_lake


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ft")
    src = write_ticket_lake(root / "csv")
    return synthesize(SynthConfig(sources=[src], out=root / "suite", tasks=40, seed=0)), src


def test_profile_flags_free_text_only(tmp_path: Path) -> None:
    db = ingest([write_ticket_lake(tmp_path / "csv")], tmp_path / "s")
    flags = {c.name: c.free_text for c in profile_lake(db).table("tickets").columns}
    assert flags == {
        "ticket_id": False,
        "customer": False,
        "region": False,
        "priority": False,
        "notes": True,
    }
    texts = ["A late delivery came.", "Late delivery again!", "Nothing here.", "Broken screen."]
    assert phrases(texts) == [("late delivery", 2)]  # in 2..half of the texts, no stop words


def test_free_text_tasks_oracle_perfect_naive_below(synthesized) -> None:
    res, _ = synthesized
    tasks = load_tasks(res.tasks_path)
    free = [t for t in tasks if t.metadata.get("layer") == "freetext"]
    kinds = {t.metadata["suql_type"] for t in free}
    assert 2 in kinds and len(kinds) >= 3, kinds  # SUQL types, round-robin
    assert any(t.underspecs for t in free) and any(not t.underspecs for t in free)
    for t in free:
        assert "ANSWER(" in t.gold_sql or "SUMMARY(" in t.gold_sql
        assert t.gold_answer and t.metadata["suql_backend"] == "offline"
        assert "ANSWER(" not in t.metadata["naive_sql"]
    env = ClarifySQLEnv(str(res.tasks_path))
    oracle = [run_episode(env, make_policy("oracle"), t.id, seed=0).correct for t in tasks]
    assert all(oracle)  # oracle Pass@1 = 1.0 on the whole suite, free-text tasks included
    naive = [run_episode(env, make_policy("naive"), t.id, seed=0).correct for t in free]
    assert sum(naive) == 0  # the LIKE / raw-text / literal readings are all wrong
    env.close()


def test_deterministic_and_vague_tasks_need_clarifying(synthesized, tmp_path: Path) -> None:
    res, src = synthesized
    again = synthesize(SynthConfig(sources=[src], out=tmp_path / "b", tasks=40, seed=0))
    assert again.tasks_path.read_bytes() == res.tasks_path.read_bytes()
    v = Verifier(res.db_path)
    for t in load_tasks(res.tasks_path):
        if t.metadata.get("layer") == "freetext" and t.underspecs:
            (u,) = t.underspecs
            assert u.value not in t.utterance and u.value in t.metadata["candidates"]
            answers = {
                p: v.rows(t.gold_sql.replace(f"mention {u.value}?", f"mention {p}?"))
                for p in t.metadata["candidates"]
            }
            assert len({tuple(a or ()) for a in answers.values()}) >= 2


def test_source_without_text_column_says_so(tmp_path: Path) -> None:
    src = write_ticket_lake(tmp_path / "csv", notes=False)
    res = synthesize(SynthConfig(sources=[src], out=tmp_path / "s", tasks=12, seed=0))
    assert not any(t.metadata.get("layer") == "freetext" for t in res.tasks)
    assert "no free-text column" in res.card_path.read_text()
    lake = profile_lake(res.db_path)
    out = freetext_tasks(lake, Verifier(res.db_path), random.Random(0), 5, 5)
    assert out.answer == [] and out.clarify == [] and out.notes


def test_a_column_too_slow_for_the_budget_is_left_out_and_named(tmp_path: Path) -> None:
    db = ingest([write_ticket_lake(tmp_path / "csv")], tmp_path / "s")
    out = freetext_tasks(profile_lake(db), Verifier(db, step_budget=200), random.Random(0), 4, 2)
    assert out.answer == [] and out.clarify == []
    assert "tickets.notes" in out.notes["free-text columns left out"]
