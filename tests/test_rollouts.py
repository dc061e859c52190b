"""The rollout runner: trajectories, determinism, crash safety (real kill -9), reports, CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clarisql.cli import main as cli_main
from clarisql.rollouts.runner import RunConfig, RunConfigError, derive_seed, plan_items, run_eval
from clarisql.rollouts.store import TrajectoryFileError, TrajectoryStore, read_trajectories

_spec = importlib.util.spec_from_file_location(
    "_rollout_tasks", Path(__file__).with_name("_rollout_tasks.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)


@pytest.fixture(scope="module")
def task_file(tmp_path_factory) -> Path:
    return fx.build_task_file(tmp_path_factory.mktemp("suite"), n_cities=2)


def _stable(lines):
    out = {}
    for x in lines:
        x = dict(x)
        x.pop("timings")
        x.pop("worker")
        out[(x["task_id"], x["trial"])] = x
    return out


def _keys(path: Path) -> list[tuple[str, int]]:
    return [
        (json.loads(x)["task_id"], json.loads(x)["trial"])
        for x in path.read_text().splitlines()
        if x.strip()
    ]


def test_eval_writes_trajectories_metrics_report_and_plots(task_file, tmp_path):
    out = tmp_path / "run"
    o = run_eval(RunConfig(suite=str(task_file), policy="oracle", trials=2), out, progress=False)
    assert o.complete and o.n_done == 28 and o.n_errors == 0
    lines = read_trajectories(out / "trajectories.jsonl")
    assert len(lines) == 28 and len({(x["task_id"], x["trial"]) for x in lines}) == 28
    line = next(x for x in lines if x["task_id"] == "riverton/from")
    assert line["seed"] == derive_seed(0, "env", "riverton/from", line["trial"])
    assert [t["action"]["type"] for t in line["turns"]] == ["clarify", "stop"]
    assert line["turns"][0]["observation"] == "The year I mean is 2024."
    assert line["turns"][-1]["reward_components"] == {"outcome": 1.0}
    assert line["summary"]["record"]["end"] == "stop" and line["correct"] and line["reward"] == 1.0
    assert set(line["timings"]) >= {"episode_s", "policy_s", "env_s"}
    assert line["opening"] == "Total sales in Riverton?"
    m = json.loads((out / "metrics.json").read_text())
    assert m["n_episodes"] == 28 and m["pass@1"] == 1.0 and m["pass^k"] == {"1": 1.0, "2": 1.0}
    assert m["phi_10"] == 1.0 and m["ecr"] == 1.0 and m["table_f1"] == 1.0
    assert set(m["by_category"]) == {
        "well-specified",
        "from",
        "where",
        "select",
        "mixed",
        "write",
        "unanswerable:column-unrelated",
    }
    assert m["detection"]["from"]["f1"] == 1.0
    report = (out / "report.md").read_text()
    assert "## By category" in report and "| from |" in report
    assert (out / "category_metrics.png").stat().st_size > 1000
    assert (out / "reward_components.png").stat().st_size > 1000
    cfg = json.loads((out / "run.json").read_text())["config"]
    assert cfg["policy"] == "oracle" and cfg["reward"]["name"] == "default"


def test_results_do_not_depend_on_workers_or_threads(task_file, tmp_path):
    cfg = RunConfig(suite=str(task_file), policy="random:7", trials=3)
    a = run_eval(cfg, tmp_path / "a", progress=False, write_reports=False)
    b = run_eval(cfg, tmp_path / "b", workers=2, progress=False, write_reports=False)
    c = run_eval(cfg, tmp_path / "c", concurrency=3, progress=False, write_reports=False)
    d = run_eval(cfg, tmp_path / "d", workers=2, concurrency=2, progress=False, write_reports=False)
    assert a.n_done == b.n_done == c.n_done == d.n_done == 42
    assert a.n_errors == b.n_errors == c.n_errors == d.n_errors == 0
    la, lb, lc, ld = (
        _stable(read_trajectories(tmp_path / x / "trajectories.jsonl")) for x in "abcd"
    )
    assert la == lb == lc == ld
    # seeds differ between trials and tasks, and trials of the random policy differ
    assert len({x["seed"] for x in la.values()}) == 42
    assert any(
        la[("riverton/from", 0)]["turns"] != la[("riverton/from", k)]["turns"] for k in (1, 2)
    )


def test_plan_items_are_task_major_and_seeded():
    items = plan_items(RunConfig(suite="x", policy="oracle", trials=2, seed=5), ["t1", "t2"])
    assert [i.key for i in items] == [("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)]
    assert items[0].seed == derive_seed(5, "env", "t1", 0) != items[1].seed


def test_max_episodes_first_or_sampled(task_file, tmp_path):
    o = run_eval(
        RunConfig(suite=str(task_file), policy="oracle", max_episodes=3),
        tmp_path / "a",
        progress=False,
        write_reports=False,
    )
    assert _keys(tmp_path / "a" / "trajectories.jsonl") == [
        ("riverton/well", 0),
        ("riverton/from", 0),
        ("riverton/where", 0),
    ]
    o = run_eval(
        RunConfig(suite=str(task_file), policy="oracle", max_episodes=5, sample=True, seed=1),
        tmp_path / "b",
        progress=False,
        write_reports=False,
    )
    assert o.n_done == 5


def test_resume_refuses_a_different_config(task_file, tmp_path):
    run_eval(
        RunConfig(suite=str(task_file), policy="oracle", max_episodes=2), tmp_path, progress=False
    )
    with pytest.raises(RunConfigError, match="different configuration.*policy"):
        run_eval(
            RunConfig(suite=str(task_file), policy="naive", max_episodes=2),
            tmp_path,
            progress=False,
        )
    with pytest.raises(RunConfigError, match="reward"):
        run_eval(
            RunConfig(suite=str(task_file), policy="oracle", max_episodes=2, reward="outcome"),
            tmp_path,
            progress=False,
        )
    # the same config resumes and has nothing left to do
    o = run_eval(
        RunConfig(suite=str(task_file), policy="oracle", max_episodes=2), tmp_path, progress=False
    )
    assert o.complete and o.n_new == 0 and o.n_done == 2


def test_truncated_last_line_is_cut_and_rerun(task_file, tmp_path):
    cfg = RunConfig(suite=str(task_file), policy="oracle", max_episodes=4)
    run_eval(cfg, tmp_path, progress=False, write_reports=False)
    traj = tmp_path / "trajectories.jsonl"
    lines = traj.read_bytes().splitlines(keepends=True)
    # simulate a kill in the middle of the last write
    traj.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    o = run_eval(cfg, tmp_path, progress=False, write_reports=False)
    assert o.n_new == 1 and o.complete
    keys = _keys(traj)
    assert len(keys) == 4 == len(set(keys))
    assert traj.read_bytes().startswith(b"".join(lines[:-1]))


def test_damaged_middle_line_is_an_error(tmp_path):
    p = tmp_path / "trajectories.jsonl"
    p.write_text('{"task_id": "a", "trial": 0}\nGARBAGE\n{"task_id": "b", "trial": 0}\n')
    with pytest.raises(TrajectoryFileError, match=":2:"):
        TrajectoryStore(p).open()


def test_store_never_writes_a_key_twice(tmp_path):
    p = tmp_path / "t.jsonl"
    with TrajectoryStore(p) as s:
        assert s.append({"task_id": "a", "trial": 0, "x": b"\x00\xff"})
        assert not s.append({"task_id": "a", "trial": 0})
    s2 = TrajectoryStore(p)
    assert [x["x"] for x in s2.open()] == ["x'00ff'"]
    assert ("a", 0) in s2 and not s2.append({"task_id": "a", "trial": 0})
    s2.close()
    assert len(p.read_text().splitlines()) == 1


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("workers", [1, 2])
def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path, workers):
    task_file = fx.build_task_file(tmp_path / "slow", n_cities=6, slow=150_000)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "clarisql",
        "eval",
        "--suite",
        str(task_file),
        "--policy",
        "oracle",
        "--trials",
        "5",
        "--workers",
        str(workers),
        "--out",
        str(out),
        "--no-progress",
    ]
    traj = out / "trajectories.jsonl"
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if traj.exists() and len(traj.read_bytes().splitlines()) >= 15:
                break
            time.sleep(0.02)
        assert proc.poll() is None, (
            f"run ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
        )
        os.kill(
            proc.pid, signal.SIGKILL
        )  # only the runner: its worker processes must exit by themselves
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _group_alive(proc.pid):
            time.sleep(0.1)
        assert not _group_alive(proc.pid), "worker processes outlived the killed runner"
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.wait(timeout=30)
    before = traj.read_bytes()
    n_before = len([x for x in before.splitlines() if x.strip()])
    assert 15 <= n_before < 210
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    after = traj.read_bytes()
    keys = _keys(traj)
    assert len(keys) == 210 and len(set(keys)) == 210
    # what was written before the kill is kept as it was (at most a torn last line is cut)
    intact = before[: before.rfind(b"\n") + 1]
    assert after.startswith(intact)
    assert json.loads((out / "metrics.json").read_text())["n_episodes"] == 210
    assert len(json.loads((out / "run.json").read_text())["sessions"]) == 2


def test_cli_eval_view_rescore_ablate(task_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        cli_main(
            [
                "eval",
                "--suite",
                str(task_file),
                "--policy",
                "naive",
                "--trials",
                "2",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "28/28 episodes" in capsys.readouterr().out
    # view: terminal and HTML
    assert cli_main(["view", str(out), "--task", "riverton/where", "--trial", "0"]) == 0
    text = capsys.readouterr().out
    assert "riverton/where" in text and "Riverton Holdings" in text and "gold SQL" in text
    html = tmp_path / "view.html"
    assert cli_main(["view", str(out), "--failed", "--html", str(html)]) == 0
    page = html.read_text()
    assert (
        page.startswith("<!DOCTYPE html>")
        and "riverton/where" in page
        and "riverton/well" not in page
    )
    # rescore under other specs, without running anything
    assert cli_main(["rescore", str(out), "--rewards", "outcome", "reliability_phi10"]) == 0
    res = json.loads((out / "rescore.json").read_text())["results"]
    m = json.loads((out / "metrics.json").read_text())
    assert res[0]["spec"] == "outcome" and res[0]["reward_mean"] == pytest.approx(m["pass@1"])
    assert res[1]["reward_mean"] == pytest.approx(m["phi_10"])
    # ablate: run a grid of policies, then re-score the same runs
    ab = tmp_path / "ab"
    # a badly designed reward: paying per turn lets a policy that never answers win
    per_turn = tmp_path / "per_turn.yaml"
    per_turn.write_text("name: per_turn\ncomponents:\n  outcome: 1.0\n  turn: 0.5\n")
    argv = [
        "ablate",
        "--suite",
        str(task_file),
        "--policies",
        "oracle",
        "naive",
        "abstain-all",
        "stop-at-once",
        "clarify-every-turn",
        "--rewards",
        "outcome",
        "dysql_state",
        str(per_turn),
        "--out",
        str(ab),
        "--no-progress",
        "--no-probes",  # the full probe set is checked in test_probes.py
    ]
    assert cli_main(argv) == 0
    assert "INTEGRITY: under 'per_turn', clarify-every-turn" in capsys.readouterr().out
    rep = json.loads((ab / "ablation.json").read_text())
    assert rep["scores"]["outcome"]["oracle"] == 1.0
    # write tasks by their final state, read tasks by their outcome
    assert rep["scores"]["dysql_state"]["oracle"] == pytest.approx(1.0)
    flagged = {(f["spec"], f["degenerate"]) for f in rep["integrity"] if f["flagged"]}
    assert flagged == {("per_turn", "clarify-every-turn")}
    assert len(rep["integrity"]) == 9  # 3 specs x 3 degenerate policies
    assert (ab / "ablation.png").stat().st_size > 1000
    md = (ab / "ablation.md").read_text()
    assert "Reward integrity check" in md and "FLAGGED" in md and "under per_turn" in md
    assert (
        cli_main(
            [
                "ablate",
                "--runs",
                str(ab / "runs" / "oracle"),
                str(out),
                "--rewards",
                "outcome",
                "--out",
                str(tmp_path / "ab2"),
            ]
        )
        == 0
    )
    rep2 = json.loads((tmp_path / "ab2" / "ablation.json").read_text())
    assert set(rep2["policies"]) == {"oracle", "naive"}


def test_cli_errors_are_one_line_exit_2(task_file, tmp_path, capsys):
    base = ["eval", "--policy", "oracle", "--no-progress"]
    assert (
        cli_main([*base, "--suite", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "a")])
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
    assert (
        cli_main(
            [
                *base,
                "--suite",
                str(task_file),
                "--rewards",
                str(tmp_path / "r.yaml"),
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 2
    )
    assert "reward spec file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    assert cli_main([*base, "--suite", str(bad), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1" in err and len(err.strip().splitlines()) == 1
    assert (
        cli_main(
            ["eval", "--suite", str(task_file), "--policy", "nosuch", "--out", str(tmp_path / "d")]
        )
        == 2
    )
    assert "unknown policy" in capsys.readouterr().err
    assert cli_main(["view", str(tmp_path / "nowhere")]) == 2
    assert cli_main(["rescore", str(tmp_path / "nowhere"), "--rewards", "outcome"]) == 2
    assert not (tmp_path / "a").exists() and not (tmp_path / "d").exists()


def test_script_policy_hallucination_and_failed_episodes(task_file, tmp_path):
    """A scripted agent that states a result it never queried is counted as hallucinating; a
    task the script lacks fails (recorded in errors.jsonl, not as a trajectory)."""
    gold = "SELECT sum(amount) FROM sales_2024 WHERE city = 'Riverton'"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "riverton/well": [
                    {
                        "type": "clarify",
                        "question": "The total is <result>999</result>, right?",
                        "labels": [],
                    },
                    {"type": "stop", "sql": gold},
                ],
                "riverton/from": [
                    {"type": "execute", "sql": gold.replace("2024", "2023")},
                    {
                        "type": "clarify",
                        "question": "I got <result>303</result>; which year?",
                        "labels": [["", "year", "Missing"]],
                    },
                    {"type": "stop", "sql": gold},
                ],
            }
        )
    )
    cfg = RunConfig(
        suite=str(task_file),
        policy=f"script:{script}",
        task_ids=["riverton/well", "riverton/from", "riverton/where"],
    )
    o = run_eval(cfg, tmp_path / "run", progress=False)
    assert not o.complete and o.n_done == 2 and o.n_errors == 1
    err = json.loads((tmp_path / "run" / "errors.jsonl").read_text())
    assert err["task_id"] == "riverton/where" and "ScriptError" in err["error"]
    m = o.metrics
    by = {x["task_id"]: x for x in read_trajectories(tmp_path / "run" / "trajectories.jsonl")}
    # 999 was never returned; 303 was (sum of Riverton's 2023 sales: 100 + 101 + 102)
    assert [t.get("hallucinated") for t in by["riverton/well"]["summary"]["record"]["turns"]][
        0
    ] is True
    assert [t["kind"] for t in by["riverton/from"]["summary"]["record"]["turns"]][1] == "clarify"
    assert by["riverton/from"]["summary"]["record"]["turns"][1]["hallucinated"] is False
    assert m["hallucination_rate"] == 0.5 and m["hallucinated_episode_rate"] == 0.5
    assert m["pass@1"] == 1.0 and m["detection"]["from"]["f1"] == 1.0
    assert m["detection"]["select"]["predicted"] == 0  # a clarify with no labels flags nothing


class MessagesSolver:
    """A stateless batched policy: decides from each episode's ``info["messages"]`` alone."""

    def __new__(cls, fail_on: str | None = None):
        from clarisql.policies.base import Policy

        tasks = {t.utterance: t for t in fx.make_tasks(n_cities=2)}

        class _Solver(Policy):
            name = "messages-solver"

            def __init__(self) -> None:
                self.batches: list[int] = []

            def reset(self, observation, info, task=None):
                self._messages = info["messages"]  # the live chat (as the hf: policy does)

            def act(self, observation, info):
                return self.act_batch([observation], [{**info, "messages": self._messages}])[0]

            def act_batch(self, observations, infos):
                self.batches.append(len(infos))
                return [self._one(info["messages"]) for info in infos]

            def _one(self, msgs):
                task = tasks[msgs[1]["content"]]
                if fail_on and task.id == fail_on:
                    raise RuntimeError("model crashed")
                turn = sum(m["role"] == "assistant" for m in msgs)
                plan = []
                if not task.answerable:
                    plan = [{"type": "abstain", "reason": "no"}]
                else:
                    if task.underspecs:
                        plan.append(
                            {
                                "type": "clarify",
                                "question": "?",
                                "labels": [u.label.to_json() for u in task.underspecs],
                            }
                        )
                    plan += [{"type": "execute", "sql": a} for a in task.gold_actions]
                    plan.append({"type": "stop", "sql": task.gold_sql})
                return plan[min(turn, len(plan) - 1)]

        return _Solver()


def test_batched_lockstep_with_an_in_memory_policy(task_file, tmp_path):
    cfg = RunConfig(suite=str(task_file), policy="messages-solver", trials=2)
    pol = MessagesSolver()
    o = run_eval(cfg, tmp_path / "a", policy=pol, batch_size=5, progress=False)
    assert o.complete and o.n_done == 28 and o.metrics["pass@1"] == 1.0
    assert max(pol.batches) == 5 and sum(pol.batches) == sum(
        len(x["turns"]) for x in read_trajectories(tmp_path / "a" / "trajectories.jsonl")
    )
    # same trajectories as one episode at a time
    o1 = run_eval(cfg, tmp_path / "b", policy=MessagesSolver(), progress=False, write_reports=False)
    assert _stable(read_trajectories(tmp_path / "a" / "trajectories.jsonl")) == _stable(
        read_trajectories(tmp_path / "b" / "trajectories.jsonl")
    )
    assert o1.n_done == 28
    # a crash of the batched policy fails the episodes of that round only; a re-run finishes
    cfg2 = RunConfig(suite=str(task_file), policy="messages-solver")
    o = run_eval(
        cfg2,
        tmp_path / "c",
        policy=MessagesSolver(fail_on="riverton/unans"),
        batch_size=3,
        progress=False,
    )
    assert not o.complete and 1 <= o.n_errors <= 3 and o.n_done == 14 - o.n_errors
    assert ("riverton/unans", 0) not in {
        (x["task_id"], x["trial"]) for x in read_trajectories(tmp_path / "c" / "trajectories.jsonl")
    }
    failed = o.n_errors
    o = run_eval(cfg2, tmp_path / "c", policy=MessagesSolver(), batch_size=3, progress=False)
    assert o.complete and o.n_done == 14 and o.n_new == failed and o.metrics["pass@1"] == 1.0
    # scripted baselines keep per-episode state: lockstep batching is refused
    with pytest.raises(RunConfigError, match="act_batch"):
        run_eval(
            RunConfig(suite=str(task_file), policy="oracle"),
            tmp_path / "d",
            batch_size=4,
            progress=False,
        )
    with pytest.raises(RunConfigError, match="one thread"):
        run_eval(cfg, tmp_path / "e", policy=MessagesSolver(), workers=2, progress=False)


DYSQL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dysql"


@pytest.mark.shared
@pytest.mark.skipif(
    not (DYSQL / "envs.json").is_file(), reason="DySQL-Bench data not found in ../shared/data/dysql"
)
def test_cli_eval_dysql_suite_with_data_and_db(tmp_path, capsys):
    out = tmp_path / "dy"
    assert (
        cli_main(
            [
                "eval",
                "--suite",
                "dysql",
                "--data",
                str(DYSQL),
                "--db",
                "chinook",
                "--policy",
                "replay",
                "--max-episodes",
                "3",
                "--trials",
                "2",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    m = json.loads((out / "metrics.json").read_text())
    assert m["n_episodes"] == 6 and m["pass@1"] == 1.0 and set(m["by_category"]) == {"write"}
    cfg = json.loads((out / "run.json").read_text())["config"]
    assert cfg["suite_kwargs"] == {"data": str(DYSQL.resolve()), "db": "chinook"}
    assert all(
        x["task_id"].startswith("chinook/") for x in read_trajectories(out / "trajectories.jsonl")
    )
    capsys.readouterr()
    assert (
        cli_main(
            [
                "eval",
                "--suite",
                "dysql",
                "--data",
                str(tmp_path / "nowhere"),
                "--policy",
                "replay",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_resume_refuses_a_task_file_rewritten_in_place(task_file, tmp_path):
    import shutil

    copy = tmp_path / "suite" / task_file.name
    shutil.copytree(task_file.parent, copy.parent)
    cfg = RunConfig(suite=str(copy), policy="oracle", max_episodes=2)
    run_eval(cfg, tmp_path / "run", progress=False, write_reports=False)
    lines = copy.read_text().splitlines()
    copy.write_text("\n".join(reversed(lines)) + "\n")  # same ids, another file
    with pytest.raises(RunConfigError, match="suite_sha256"):
        run_eval(cfg, tmp_path / "run", progress=False, write_reports=False)
