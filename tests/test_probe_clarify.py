"""Probes that ask too much or guess instead of asking (label-shotgun, text-shotgun, label-sweep,
nearest-value, first-match), explore-without-clarifying on UNION and subqueries, the honest
agent that misses, and the strategy search: each is run on a case it must catch (a probe that
reports 0 may be blind), and each shotgun is charged below a precise agent."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlite_utils

from clarisql.envs.env import ClarifySQLEnv
from clarisql.envs.tasks import Label, Task, Underspec, save_tasks
from clarisql.policies import make_policy
from clarisql.policies.probes import (
    Strategy,
    StrategyPolicy,
    candidate_labels,
    first_match,
    nearest_value,
    replace_literals,
    shotgun_questions,
    string_literals,
    strip_filter,
    utterance_spans,
)
from clarisql.rewards import EpisodeRecord, load_reward_spec, score_episode
from clarisql.rollouts.episode import run_episode
from clarisql.rollouts.search import decode, search_strategies

from .conftest import build_small_db, small_task

PRESETS = ("default", "clarify_costs", "reliability_phi10", "reliability_phi10_strict")


def _projects_db(path: Path, gold_first: bool = True) -> Path:
    db = sqlite_utils.Database(path)
    names = ["Jade Tower North Block", "Jade Tower South Block", "Oak Plaza"]
    if not gold_first:
        names = [names[1], names[0], names[2]]
    db["sales"].insert_all(
        [{"id": i + 1, "project": n, "price": 100 * (i + 1)} for i, n in enumerate(names)]
    )
    db["t"].insert_all([{"a": 1, "c": "x"}, {"a": 2, "c": "y"}])
    db["u"].insert_all([{"a": 3, "c": "y"}, {"a": 4, "c": "x"}])
    db.close()
    return path


def _env(tmp_path: Path, tasks: list[Task], **kw) -> ClarifySQLEnv:
    return ClarifySQLEnv(str(save_tasks(tasks, tmp_path / "tasks.jsonl")), **kw)


def _small(tmp_path: Path) -> list[Task]:
    build_small_db(tmp_path / "small.sqlite")
    return [small_task(k, f"t/{k}") for k in ("from", "where", "select", "count", "poem")]


def test_candidate_labels_cover_the_gold_without_reading_it() -> None:
    text = "How much did Projekt 3 sell for in Riverton?"
    spans = utterance_spans(text)
    assert "Projekt 3" in spans and "Riverton" in spans
    labels = candidate_labels(text)
    keys = {tuple(lb) if isinstance(lb, list) else lb for lb in labels}
    assert "intent" in keys and ("", "year", "Missing") in keys
    assert ("Projekt 3", "project", "not-exist") in keys and ("Riverton", "city", "Error") in keys
    cn = utterance_spans("请告知空港城市发展集团的负债情况")
    assert "空港城市发展集团" in cn
    q = " ".join(shotgun_questions("What did Willow Court sell in Riverton?"))
    assert "'Willow Court'" in q and "'Riverton'" in q and "year" in q


def test_label_shotgun_and_sweep_ask_every_needed_label_and_pay_for_the_rest(
    tmp_path: Path,
) -> None:
    """The shotgun lists every needed label (it is not blind), yet the bounded gate refuses the
    turn (nothing found); the sweep finds them a few at a time; every preset charges both below
    the oracle and the honest agent that misses."""
    tasks = _small(tmp_path)
    env = _env(tmp_path, tasks)
    runs = {}
    for pol in ("oracle", "oracle-miss:0.5", "label-shotgun", "label-sweep"):
        p = make_policy(pol)
        runs[pol] = [run_episode(env, p, t.id) for t in tasks]
    for r, t in zip(runs["label-shotgun"], tasks):
        if t.underspecs:
            listed = {Label.parse(lb).key() for lb in candidate_labels(t.utterance)}
            assert {u.label.key() for u in t.underspecs} <= listed, t.id  # not blind
            # one thing at a time: the turn is refused (by the gate, or past the parser's label
            # cap), so nothing is found
            assert r.summary["label_recall"] == 0.0
    sweep = [r for r, t in zip(runs["label-sweep"], tasks) if t.id == "t/from"][0]
    assert sweep.summary["label_recall"] == 1.0  # ["", "year", "Missing"] is swept early
    for preset in PRESETS:
        spec = load_reward_spec(preset)

        def mean(pol: str, spec=spec) -> float:
            recs = [EpisodeRecord.from_dict(r.summary["record"]) for r in runs[pol]]
            return sum(score_episode(x, spec)[0] for x in recs) / len(recs)

        honest = min(mean("oracle"), mean("oracle-miss:0.5"))
        assert mean("label-shotgun") < honest and mean("label-sweep") < honest, preset


def test_text_shotgun_is_counted_by_the_aspects_it_names(tmp_path: Path) -> None:
    tasks = _small(tmp_path)
    env = _env(tmp_path, tasks, gate="both")
    r = run_episode(env, make_policy("text-shotgun"), "t/from")
    assert r.summary["unneeded_clarifications"] >= 3  # three turns, each asks about something
    assert r.summary["label_precision"] < 0.5
    o = run_episode(env, make_policy("oracle"), "t/from")
    assert r.reward < o.reward


def test_value_guessers_catch_look_alikes_the_database_resolves(tmp_path: Path) -> None:
    """A look-alike with one completion (prefix) or stored gold-first is resolved without
    asking: nearest-value and first-match must score it; stored the other way round, first-match
    must miss it."""
    assert nearest_value(
        "Jade Towr North Block", ["Jade Tower South Block", "Jade Tower North Block"]
    ) == ("Jade Tower North Block")
    assert nearest_value("Oak", ["Jade Tower", "Oak Plaza"]) == "Oak Plaza"
    assert first_match("Jade Tower", ["Jade Tower South Block", "Jade Tower North Block"]) == (
        "Jade Tower South Block"
    )
    assert (
        first_match("空港集团", ["成都空港城市发展集团有限公司"]) == "成都空港城市发展集团有限公司"
    )
    sql = "SELECT price FROM sales WHERE project = 'Jade Tower'"
    assert string_literals(sql) == [("sales", "project", "Jade Tower")]
    assert replace_literals(sql, {("sales", "project", "Jade Tower"): "X"}) == (
        "SELECT price FROM sales WHERE project = 'X'"
    )

    def task(tid: str, surface: str, full: str) -> Task:
        return Task(
            id=tid,
            db="p.sqlite",
            utterance=f"What did {surface} sell for?",
            category="where",
            gold_sql=f"SELECT price FROM sales WHERE project = '{full}'",
            underspecs=[Underspec(Label("not-exist", surface, "project"), full)],
            metadata={"naive_sql": f"SELECT price FROM sales WHERE project = '{surface}'"},
        )

    for gold_first in (True, False):
        _projects_db(tmp_path / "p.sqlite", gold_first)
        tasks = [
            task("prefix", "Oak", "Oak Plaza"),
            task("first", "Jade Tower", "Jade Tower North Block"),
        ]
        env = _env(tmp_path, tasks)
        got = {
            (pol, t.id): run_episode(env, make_policy(pol), t.id).correct
            for pol in ("nearest-value", "first-match", "answer-without-clarifying")
            for t in tasks
        }
        assert got[("nearest-value", "prefix")] and got[("first-match", "prefix")]
        assert got[("first-match", "first")] is gold_first
        assert not any(got[("answer-without-clarifying", t.id)] for t in tasks)
        (tmp_path / "p.sqlite").unlink()


def test_explore_without_clarifying_strips_union_branches_and_subqueries(tmp_path: Path) -> None:
    """A UNION gold was left whole (so the probe replayed the gold and looked like the oracle):
    now every branch loses its filter; where the filter matters the explorer must fail, where
    it does not the explorer must succeed (the task does not need its clarification)."""
    assert strip_filter("SELECT a FROM t WHERE c = 'x' UNION SELECT a FROM u WHERE c = 'y'") == (
        "SELECT a FROM t UNION SELECT a FROM u"
    )
    assert strip_filter("SELECT n FROM (SELECT a AS n FROM t WHERE c = 'x') AS s") == (
        "SELECT n FROM (SELECT a AS n FROM t) AS s"
    )
    _projects_db(tmp_path / "p.sqlite")
    label = [Underspec(Label("Missing", "", "year"), "x")]

    def task(tid: str, sql: str) -> Task:
        return Task(
            id=tid, db="p.sqlite", utterance="?", category="from", gold_sql=sql, underspecs=label
        )

    tasks = [
        task("matters", "SELECT a FROM t WHERE c = 'x' UNION SELECT a FROM u WHERE c = 'y'"),
        task("sub", "SELECT s.a FROM (SELECT a FROM t WHERE c = 'x') AS s"),
        task("idle", "SELECT a FROM t WHERE a > 0 UNION SELECT a FROM u WHERE a > 0"),
    ]
    env = _env(tmp_path, tasks)
    got = {
        t.id: run_episode(env, make_policy("explore-without-clarifying"), t.id).correct
        for t in tasks
    }
    assert got == {"matters": False, "sub": False, "idle": True}


def test_strategy_search_finds_a_shotgun_when_nothing_charges_it(tmp_path: Path) -> None:
    """Not blind: under ``outcome`` (no charge) on tasks a label shotgun resolves, the search
    reaches the oracle; under the charged presets its best stays below the honest agents."""
    tasks = [t for t in _small(tmp_path) if t.id != "t/where"]  # labels a few turns reach
    env = _env(tmp_path, tasks)

    def play(policy):
        return [
            EpisodeRecord.from_dict(run_episode(env, policy, t.id).summary["record"]) for t in tasks
        ]

    refs = {p: play(make_policy(p)) for p in ("oracle", "oracle-miss:0.1")}
    specs = [load_reward_spec(s) for s in ("outcome", *PRESETS)]
    res = {
        r.spec: r
        for r in search_strategies(
            play, specs, refs, seed=0, population=8, iterations=3, text=False
        )
    }
    assert res["outcome"].best_score >= res["outcome"].honest["oracle"] - 1e-9
    for preset in PRESETS:
        r = res[preset]
        assert r.best_score < min(r.honest.values()), (preset, r.best.describe())
    assert decode([0, 0, 0, 0, 0, 0]) == Strategy(length=4)
    st = decode([1, 1, 1, 0.4, 0.15, 1])
    assert st.labels == 24 and st.turns == 8 and st.guess == "first"
    assert st.abstain_on == "words" and st.length == 40
    p = StrategyPolicy(Strategy(abstain_on="words"))
    r = run_episode(env, p, "t/poem")
    assert r.correct  # "Write a poem" is a surface cue
    assert pytest.approx(r.reward) == 1.0


def test_the_writer_needs_the_instruction_facts_told(tmp_path: Path) -> None:
    """A write task whose instruction holds more than its opening message (DySQL's shape): a
    probe is written the gold only when the replies told the values the opening lacks, so asking
    about nothing in particular does not tie the golden replay (it did, playing the gold)."""
    from clarisql.policies.probes import hidden_values

    build_small_db(tmp_path / "small.sqlite")
    t = Task(
        id="w/1",
        db="small.sqlite",
        utterance="Please add a new city for me.",
        instruction="Add the city Eastham with id 3.",
        category="write",
        writable=True,
        gold_actions=["INSERT INTO cities VALUES (3, 'Eastham')"],
    )
    assert hidden_values(t) == ["Eastham"]
    env = _env(tmp_path, [t])
    for pol in ("label-shotgun", "label-sweep", "nearest-value", "first-match"):
        assert not run_episode(env, make_policy(pol), "w/1").correct, pol
    assert run_episode(env, make_policy("oracle-miss:0.1"), "w/1").correct


def test_ablate_search_cli_writes_its_report(tmp_path: Path) -> None:
    import json

    from clarisql.cli import main as cli_main

    from ._rollout_tasks import build_task_file

    tf = build_task_file(tmp_path)
    out = tmp_path / "abl"
    args = ["ablate", "--suite", str(tf), "--policies", "oracle", "--no-probes", "--out", str(out)]
    args += ["--no-progress", "--rewards", "default", "outcome", "--search", "--search-tasks", "6"]
    args += ["--search-population", "3", "--search-iterations", "2"]
    assert cli_main(args) == 0
    res = json.loads((out / "search.json").read_text())
    assert [r["spec"] for r in res] == ["default", "outcome"]
    honest = {"oracle", "oracle-miss:0.1", "oracle-miss:0.1:abstain"}
    assert all(set(r["honest"]) == honest for r in res)
    assert "| default |" in (out / "search.md").read_text()


def test_a_turn_refused_as_too_broad_finds_nothing_and_pays_for_everything(
    tmp_path: Path,
) -> None:
    """Within the parser's cap but past the gate's bound: the gold label among the six asked
    is not found (nothing was revealed) and all six are unneeded."""
    tasks = _small(tmp_path)
    env = _env(tmp_path, tasks)
    t = next(t for t in tasks if t.underspecs)
    gold = [t.underspecs[0].label.to_list()] if hasattr(t.underspecs[0].label, "to_list") else None
    labels = [["", s, "Missing"] for s in ("year", "city", "district", "region")]
    labels += [["x", "county", "not-exist"]]
    if gold:
        labels += gold
    else:
        labels += ["intent"]
    env.reset(options={"task_id": t.id})
    _, _, _, _, info = env.step({"type": "clarify", "question": "?", "labels": labels})
    _, _, _, _, info = env.step({"type": "abstain", "reason": "done"})
    s = info["episode"]
    assert s["label_recall"] == 0.0 and s["unneeded_clarifications"] == 6


def test_the_lookup_frame_is_a_cue_the_search_may_abstain_on() -> None:
    """The frame column requests share with their twins ("the X of the Y whose K is V") is a
    surface cue of the family: a strategy that declines every lookup is searched and measured
    (on the synthesized suites it stays below the honest reference: docs/wording.md)."""
    from clarisql.policies.probes import CUES

    for text in (
        'What is the composer of the track whose name is "Dazed"?',
        "Tell me the unit price for the track with name Dazed.",
        "List the title of every album with artist ID 3.",
    ):
        assert CUES["lookup"](text, 0) and not CUES["no-lookup"](text, 0)
    for text in ("How many tracks are there?", "Plot the total of every genre."):
        assert not CUES["lookup"](text, 0) and CUES["no-lookup"](text, 0)
    assert StrategyPolicy(Strategy(abstain_on="lookup")).strategy.abstain_on == "lookup"
