"""SUQL: ANSWER/SUMMARY inside SQL, in the sandbox, with the compiler and pluggable backends."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import sqlite_utils

from clarisql.envs import ClarifySQLEnv, SessionLimits, get_image
from clarisql.envs.suites import file_suite
from clarisql.envs.suql import OfflineBackend, compile_sql, using
from clarisql.envs.tasks import Task, save_tasks
from tests._fake_openai import FakeOpenAI, completion

ROWS = [
    # name, cuisine, price, reviews, description
    (
        "Aria",
        "Italian",
        "$$",
        ["A romantic spot. Great pasta."],
        "Chef Ann Lee runs the kitchen. It opened its doors in 2011.",
    ),
    (
        "Basil",
        "Italian",
        "$",
        ["Not romantic at all. Loud music."],
        "Head chef Bo Chan trained in Rome. First opened in 2015.",
    ),
    (
        "Cove",
        "Thai",
        "$",
        ["Candle-lit tables. We ate on the garden terrace."],
        "The kitchen is led by Cy Dee. Has been serving since 1999.",
    ),
    (
        "Dune",
        "Thai",
        "$$$",
        ["Busy at lunch."],
        "Chef Di Fox runs the kitchen. First opened in 2020.",
    ),
]


def _db(path: Path, n_extra: int = 0) -> Path:
    db = sqlite_utils.Database(path)
    rows = [
        {"id": i, "name": n, "cuisine": c, "price": p, "reviews": json.dumps(r), "description": d}
        for i, (n, c, p, r, d) in enumerate(ROWS, 1)
    ]
    for j in range(n_extra):
        rows.append(
            {
                "id": 100 + j,
                "name": f"Filler {j}",
                "cuisine": "Diner",
                "price": "$",
                "reviews": json.dumps(["Plain food." if j % 50 else "A romantic spot."]),
                "description": "Nothing to say.",
            }
        )
    db["r"].insert_all(rows, pk="id")
    return path


# SUQL Table 2's six HybridQA query types, over this table, with the expected rows.
SIX_TYPES = [
    ("SELECT ANSWER(description, 'who is the chef?') FROM r WHERE name = 'Cove'", [["Cy Dee"]]),
    ("SELECT name FROM r WHERE ANSWER(reviews, 'is it romantic?') = 'Yes'", [["Aria"], ["Cove"]]),
    (
        "SELECT ANSWER(description, 'who is the chef?') FROM r "
        "WHERE ANSWER(reviews, 'is it good for a date?') = 'Yes'",
        [["Ann Lee"], ["Cy Dee"]],
    ),
    (
        "SELECT name FROM r WHERE cuisine = 'Thai' "
        "AND ANSWER(reviews, 'does it have outdoor seating?') = 'Yes'",
        [["Cove"]],
    ),
    (
        "SELECT MAX(CAST(ANSWER(description, 'what year did it open?') AS INTEGER)) FROM r "
        "WHERE cuisine IN ('Italian', 'Thai')",
        [[2020]],
    ),
    (
        "SELECT name FROM r ORDER BY CAST(ANSWER(description, 'what year did it open?') AS INTEGER) "
        "DESC LIMIT 1",
        [["Dune"]],
    ),
]


def test_six_hybridqa_types_run_in_an_episode(tmp_path: Path) -> None:
    db = _db(tmp_path / "r.sqlite")
    tasks = [
        Task(id=f"t{i}", db="r.sqlite", utterance="q", gold_sql=sql, gold_answer=rows)
        for i, (sql, rows) in enumerate(SIX_TYPES)
    ]
    save_tasks(tasks, tmp_path / "tasks.jsonl")
    assert db.is_file()
    with using(backend="offline", embedder="hashing"):
        env = ClarifySQLEnv(file_suite(tmp_path / "tasks.jsonl"))
        for i, (sql, rows) in enumerate(SIX_TYPES):
            env.reset(options={"task_id": f"t{i}"})
            obs, _, term, _, info = env.step({"type": "execute", "sql": sql})
            assert info["error"] is None, (sql, info["error"])
            assert not term
            obs, _, term, _, info = env.step({"type": "stop", "sql": sql})
            ep = info["episode"]
            assert ep["correct"], (sql, ep["record"]["answer_rows"], rows)
            assert ep["suql"]["queries"] == 2 and ep["suql"]["evaluations"] > 0
            assert ep["suql"]["model_calls"] + ep["suql"]["cache_hits"] == ep["suql"]["evaluations"]
        env.close()


def test_summary_and_group_form(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    with using(backend="offline"), img.session(False) as s:
        res = s.execute("SELECT SUMMARY(reviews) FROM r WHERE name = 'Cove'")
        assert res.ok and res.rows == [("Candle-lit tables. Mentions: romantic, outdoor seating.",)]
        res = s.execute(
            "SELECT cuisine, SUMMARY(json_group_array(reviews)) FROM r GROUP BY cuisine ORDER BY 1"
        )
        assert res.ok and [r[0] for r in res.rows] == ["Italian", "Thai"]
        assert "Mentions: romantic" not in res.rows[0][1]  # one review says "not romantic"
        assert res.rows[1][1].endswith("Mentions: romantic, outdoor seating.")
        assert s.execute("SELECT ANSWER(NULL, 'q'), SUMMARY(NULL)").rows == [(None, None)]


def test_sandbox_rules_still_apply(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    with img.session(False) as s:
        res = s.execute("UPDATE r SET name = ANSWER(reviews, 'q')")
        assert not res.ok and "read-only" in res.error
        res = s.execute("SELECT ANSWER(reviews, 'q') FROM r; SELECT 1")
        assert not res.ok
        res = s.execute("SELECT ANSWER(reviews) FROM r")
        assert not res.ok and "answer" in res.error.lower()


def test_structural_predicates_first_and_cache(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite", n_extra=200))
    q = "SELECT name FROM r WHERE ANSWER(reviews, 'is it romantic?') = 'Yes' AND cuisine = 'Thai'"
    plan = compile_sql(q)
    assert plan.rewritten and plan.sql.index("cuisine") < plan.sql.index("ANSWER")
    with using(backend="offline", embedder="none"), img.session(False) as s:
        res = s.execute(q)
        st = s.extensions["suql"].current
        assert res.ok and res.rows == [("Cove",)]
        assert st.evaluations == 2 and st.model_calls == 2  # only the two Thai rows
        s.execute(q)
        assert s.extensions["suql"].current.cache_hits == 2
        assert s.extensions["suql"].current.model_calls == 0
        # DNF: (Thai OR Italian-and-romantic) evaluates ANSWER only on Italian rows
        res = s.execute(
            "SELECT name FROM r WHERE (cuisine = 'Thai' OR ANSWER(reviews, 'is it a romantic place?')"
            " = 'Yes') AND (cuisine = 'Thai' OR cuisine = 'Italian') ORDER BY name"
        )
        assert [r[0] for r in res.rows] == ["Aria", "Cove", "Dune"]
        assert s.extensions["suql"].current.evaluations == 2


@pytest.mark.parametrize("embedder", ["none", "hashing"])
def test_lazy_limit_and_prefilter_match_naive(tmp_path: Path, embedder: str) -> None:
    img = get_image(_db(tmp_path / "r.sqlite", n_extra=1000))
    q = (
        "SELECT id FROM r WHERE price = '$' AND ANSWER(reviews, 'is it romantic?') = 'Yes' "
        "ORDER BY id DESC LIMIT 3"
    )
    with using(backend="offline", embedder=embedder, k=10), img.session(False) as s:
        res = s.execute(q)
        st = s.extensions["suql"].current
    want = [(1050,), (1000,), (950,)]  # filler rows j % 50 == 0 are romantic, ids 100 + j
    assert res.ok and res.rows == want, (res.error, compile_sql(q, 10).sql)
    assert "lazy-limit" in st.steps
    assert st.evaluations <= 150  # naive evaluation would ask about all 1003 cheap rows
    if embedder == "hashing":
        assert any(x.startswith("prefilter") for x in st.steps) and st.evaluations <= 30


def test_openai_backend_and_faults(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    q = "SELECT name FROM r WHERE ANSWER(reviews, 'is it romantic?') = 'Yes' ORDER BY name"
    with FakeOpenAI() as srv:
        srv.script = [(200, {"reply": "Yes"}, 0.0)]
        with using(backend=f"openai:m@{srv.url}", embedder="none"), img.session(False) as s:
            res = s.execute(q)
            assert res.ok and len(res.rows) == 4
            assert "romantic" in srv.requests[0]["messages"][0]["content"]
    with FakeOpenAI() as srv:  # a broken backend: bounded retries, then an error result
        srv.script = [(500, {"error": {"message": "boom"}}, 0.0)]
        with using(backend=f"openai:m@{srv.url}", embedder="none", retries=2):
            with img.session(False) as s:
                res = s.execute(q)
            assert not res.ok and "ANSWER failed after 3 attempt(s)" in res.error
            assert len(srv.requests) == 3


def test_hanging_backend_costs_one_error_observation(tmp_path: Path) -> None:
    db = _db(tmp_path / "r.sqlite")
    save_tasks(
        [Task(id="t", db=db.name, utterance="q", gold_sql="SELECT name FROM r")],
        tmp_path / "tasks.jsonl",
    )
    with FakeOpenAI(lambda body, n: (200, json.dumps(completion("Yes")).encode(), 3.0)) as srv:
        with using(backend=f"openai:m@{srv.url}", embedder="none"):
            env = ClarifySQLEnv(
                file_suite(tmp_path / "tasks.jsonl"), limits=SessionLimits(timeout_s=0.5)
            )
            env.reset(options={"task_id": "t"})
            t0 = time.monotonic()
            obs, _, term, trunc, info = env.step(
                {"type": "execute", "sql": "SELECT ANSWER(reviews, 'is it loud?') FROM r"}
            )
            assert time.monotonic() - t0 < 2.5
            assert info["error"] and obs["last"].startswith("ERROR") and not term and not trunc
            obs, _, term, _, info = env.step({"type": "stop", "sql": "SELECT name FROM r"})
            assert term and info["episode"]["correct"]
            env.close()


def test_offline_backend_is_documented_and_deterministic() -> None:
    b = OfflineBackend()
    assert "How it decides" in (OfflineBackend.__doc__ or "")
    assert b.answer(["Not romantic at all."], "Is it romantic?") == "No"
    assert b.answer(["We ate on the garden terrace."], "Any outdoor seating?") == "Yes"
    assert b.answer(["It has a rooftop bar with views."], "Does it have a rooftop bar?") == "Yes"
    assert b.answer(["It has a rooftop bar."], "Does it take reservations online?") == "No"


def test_compiler_never_raises_on_hostile_input() -> None:
    for sql in [
        "SELECT ANSWER(",
        "SELECT * FROM r WHERE ANSWER(a, 'q') = 'Yes' LIMIT 'x'",
        "SELECT * FROM r WHERE ANSWER(a, 'q') = 'Yes' LIMIT 5; DROP TABLE r",
        "WITH x AS (SELECT ANSWER(a, 'q') AS v FROM r) SELECT * FROM x WHERE SUMMARY(v) > '' LIMIT 2",
        "SELECT * FROM r JOIN s ON r.id = s.id WHERE ANSWER(r.a, 'q') = 'Yes' LIMIT 1",
        "SELECT a AS z FROM r WHERE ANSWER(a, 'q') = 'Yes' ORDER BY z LIMIT 1",
        "(" * 500 + "SELECT ANSWER(a, 'q')" + ")" * 500,
        b"\xff",
        None,
    ]:
        plan = compile_sql(sql, 10)
        assert plan.sql == sql or isinstance(plan.sql, str)
    # ORDER BY a select alias or ordinal keeps SQLite's own evaluation (no lazy rewrite)
    assert (
        "lazy-limit"
        not in compile_sql(
            "SELECT a AS z FROM r WHERE ANSWER(a, 'q') = 'Yes' ORDER BY z LIMIT 1", 10
        ).steps
    )


def test_embedders_offline_and_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    from clarisql.envs.suql import embed

    monkeypatch.setattr(embed, "_SHARED", {})

    def broken(*a: object, **k: object) -> None:
        raise ImportError("the minilm embedder needs sentence_transformers")

    monkeypatch.setattr(embed, "MiniLMEmbedder", broken)
    with pytest.warns(UserWarning, match="hashing"):
        emb = embed.make_embedder("auto")
    assert isinstance(emb, embed.HashingEmbedder)
    with pytest.raises(ValueError):
        embed.make_embedder("nope")


EXACT_QUERIES = [
    "SELECT name FROM r WHERE ANSWER(reviews, 'is it romantic?') = 'Yes' AND price = '$'",
    "SELECT id FROM r WHERE price = '$' AND ANSWER(reviews, 'is it romantic?') = 'Yes' "
    "ORDER BY id DESC LIMIT 4 OFFSET 1",
    "SELECT id FROM r WHERE (cuisine = 'Thai' OR ANSWER(reviews, 'is it romantic?') = 'Yes') "
    "AND (price = '$' OR cuisine = 'Italian') ORDER BY id LIMIT 6",
    "SELECT name, ANSWER(description, 'who is the chef?') FROM r ORDER BY id DESC LIMIT 3",
    "SELECT ANSWER(description, 'who is the chef?') AS chef FROM r WHERE cuisine <> 'Diner' "
    "ORDER BY name LIMIT 2",
    "SELECT COUNT(*) FROM r WHERE NOT (ANSWER(reviews, 'is it romantic?') = 'Yes' "
    "AND cuisine = 'Diner')",
    "SELECT id FROM r WHERE id IN (SELECT id FROM r WHERE cuisine = 'Diner' "
    "AND ANSWER(reviews, 'is it romantic?') = 'Yes' LIMIT 3)",
]


@pytest.mark.parametrize("sql", EXACT_QUERIES)
def test_exact_rewrites_keep_results_and_save_calls(tmp_path: Path, sql: str) -> None:
    img = get_image(_db(tmp_path / "r.sqlite", n_extra=300))
    out = {}
    for optimize in (False, True):
        with using(backend="offline", embedder="none", optimize=optimize) as cfg:
            cfg.cached.clear()
            with img.session(False) as s:
                res = s.execute(sql)
                assert res.ok, (res.error, compile_sql(sql).sql)
                out[optimize] = (res.rows, s.extensions["suql"].current.model_calls)
    assert out[True][0] == out[False][0]
    # DNF may ask the same question twice for one row (a cache hit), never the model more often
    assert out[True][1] <= out[False][1]


def test_runtime_made_only_when_a_statement_may_call_the_functions(tmp_path: Path) -> None:
    # A session that never spells ANSWER/SUMMARY/suql_similarity makes no runtime (the reset
    # path stays cheap), yet the functions are listed on every connection, work from a
    # temporary view made in the session, from UTF-8 bytes and on a pooled connection, and the
    # episode stats read the same either way.
    img = get_image(_db(tmp_path / "r.sqlite"))
    names = "SELECT name FROM pragma_function_list WHERE name IN ('answer', 'summary') ORDER BY 1"
    with using(backend="offline", embedder="none"):
        for writable in (False, True):
            with img.session(writable) as s:
                fl = s.execute("PRAGMA function_list")
                assert s._lazy and not s._stmt_exts  # (no runtime yet)
                assert {"answer", "summary"} <= {r[0] for r in fl.rows}
                assert s.execute(names).rows == [("answer",), ("summary",)]
                assert s._stmt_exts  # spelled in the statement: made before it ran
            with img.session(writable) as s:
                res = s.execute(b"SELECT ANSWER(description, 'who is the chef?') FROM r WHERE id=3")
                assert res.ok and res.rows == [("Cy Dee",)]
                assert s.extensions["suql"].current.evaluations == 1
            with img.session(writable) as s:
                res = s.execute("SELECT 1")
                ep = s.extensions["suql"].episode_stats()  # made when read
                assert ep["backend"] == "offline" and ep["queries"] == ep["evaluations"] == 0
                assert res.sql == "SELECT 1"
        with img.session(True) as s:
            assert s.execute("CREATE TEMP VIEW v AS SELECT SUMMARY(reviews) AS x FROM r").ok
            res = s.execute("SELECT x FROM v WHERE x LIKE 'Candle%'")
            assert res.ok and len(res.rows) == 1
            assert s.extensions["suql"].episode_stats()["evaluations"] >= 4
