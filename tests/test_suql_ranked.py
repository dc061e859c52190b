"""SUQL's ranked lazy evaluation: ANSWER walks down a retrieval ranking until LIMIT rows pass.

The ranking (embedder, query expansion, a slow or failing embedder or expansion) may change how
many model calls a statement makes, never its result.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import sqlite_utils

from clarisql.envs import SessionLimits, get_image
from clarisql.envs.suql import BackendError, OfflineBackend, compile_sql, using
from clarisql.envs.suql.embed import HashingEmbedder
from clarisql.envs.suql.runtime import UNRANKED, chunk_similarity
from tests._fake_openai import FakeOpenAI, completion

ROMANTIC = {7, 130, 261, 388, 402}  # ids whose review supports "romantic" (in a paraphrase)


def _db(path: Path, rows: int = 500) -> Path:
    db = sqlite_utils.Database(path)
    data = []
    for i in range(1, rows + 1):
        sents = [f"Visit number {i} was fine.", "The food came out hot."]
        if i in ROMANTIC:
            sents.append("Candle-lit tables." if i % 2 else "Intimate and softly lit.")
        elif i % 40 == 0:
            sents.append("Not romantic at all.")  # a denial with the keyword
        data.append(
            {"id": i, "kind": "a" if i % 3 else "b", "reviews": json.dumps([" ".join(sents)])}
        )
    db["r"].insert_all(data, pk="id")
    return path


Q = "SELECT id FROM r WHERE ANSWER(reviews, 'is it good for a romantic evening?') = 'Yes' LIMIT 5"


def _run(img, sql: str, **cfg) -> tuple[set, object]:
    with using(**cfg) as c:
        c.cached.clear()
        with img.session(False, SessionLimits(timeout_s=cfg.pop("_t", 30.0))) as s:
            res = s.execute(sql)
            assert res.ok, res.error
            return {r[0] for r in res.rows}, s.extensions["suql"].current


def test_ranked_lazy_evaluation_is_exact_under_every_ranking(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    plan = compile_sql(Q, 0, rank=True)
    assert "ranked" in plan.steps and "LIMIT -1" in plan.sql  # no top-k cut
    naive, st0 = _run(img, Q.replace(" LIMIT 5", ""), backend="offline", embedder="none")
    assert naive == ROMANTIC and st0.evaluations == 500
    calls = {}
    for expand in (False, True):
        got, st = _run(img, Q, backend="offline", embedder="hashing", expand=expand)
        assert got == ROMANTIC, expand  # the result never depends on the ranking
        assert "ranked" in st.steps
        calls[expand] = st.evaluations
        assert st.expansion_calls == int(expand)
    # the backend's expansion ("candle-lit tables", ...) puts the paraphrased rows first
    assert calls[True] <= 10 < calls[False]
    # SUQL's cut (k > 0) bounds the calls but may lose rows: here it does without expansion
    cut, st = _run(img, Q, backend="offline", embedder="hashing", expand=False, k=2)
    assert "prefilter top 10" in st.steps and st.evaluations <= 10 and cut < ROMANTIC


def test_structural_order_is_walked_exactly(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    sql = Q.replace(" LIMIT 5", " AND kind = 'a' ORDER BY id DESC LIMIT 2")
    plan = compile_sql(sql, 0, rank=True)
    assert "ranked" not in plan.steps and "lazy-limit" in plan.steps
    got, st = _run(img, sql, backend="offline", embedder="hashing")
    want = sorted((i for i in ROMANTIC if i % 3), reverse=True)[:2]
    assert got == set(want)
    assert st.evaluations <= 500 - 130  # stops at the second passing row in id order


class _NoExpansion(OfflineBackend):
    key = "offline-no-expansion"

    def expand(self, question: str, timeout_s: float = 0.0) -> list[str]:
        raise BackendError("expansion endpoint down")


def test_failed_expansion_falls_back_to_the_question(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite"))
    got, st = _run(img, Q, backend=_NoExpansion(), embedder="hashing", retries=0)
    assert got == ROMANTIC and st.expansion_calls == 0


class _SlowEmbedder(HashingEmbedder):
    name = "slow"

    def _encode(self, texts: list[str]) -> np.ndarray:
        time.sleep(1.0)
        return super()._encode(texts)


def test_slow_embedder_costs_calls_not_the_result(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite", rows=1500))
    emb = _SlowEmbedder()
    assert chunk_similarity(emb, "Never seen.", "q", only_cached=True) == UNRANKED
    with using(backend="offline", embedder="hashing") as cfg:
        cfg._embedder = emb
        cfg.cached.clear()
        # (slow calls of 1 s and a 5 s budget: the prewarm stops at half of it, a few calls and
        # long before all 1,500 rows, and the rest has 2.5 s for its CPU work on a busy machine)
        with img.session(False, SessionLimits(timeout_s=5.0)) as s:
            res = s.execute(Q)
    assert res.ok, res.error  # within the statement's budget despite the slow embedder
    assert {r[0] for r in res.rows} == ROMANTIC
    assert 0 < len(emb._cache) < 1500  # the prewarm stopped at half the budget


def test_defaults_are_exact_with_the_packaged_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    from clarisql.envs.suql import config as suql_config

    monkeypatch.delenv("CLARISQL_SUQL_EMBEDDER", raising=False)
    monkeypatch.delenv("CLARISQL_SUQL_K", raising=False)
    cfg = suql_config._from_env()
    assert cfg.embedder_name == "auto" and cfg.k == 0 and cfg.expand


def test_openai_backend_expands_once_and_shares_the_circuit_breaker(tmp_path: Path) -> None:
    img = get_image(_db(tmp_path / "r.sqlite", rows=60))

    def behave(body: dict, n: int) -> tuple[int, bytes, float]:
        prompt = body["messages"][0]["content"]
        if prompt.startswith("Write up to five"):
            reply = "1. Candle-lit tables.\n- Intimate and softly lit."
        else:
            reply = "Yes" if ("Candle-lit" in prompt or "Intimate" in prompt) else "No"
        return 200, json.dumps(completion(reply)).encode(), 0.0

    with FakeOpenAI(behave) as srv:
        one = Q.replace("LIMIT 5", "LIMIT 1")
        got, st = _run(img, one, backend=f"openai:m@{srv.url}", embedder="hashing")
        assert got == {7} and st.expansion_calls == 1  # the one romantic row among 60
        asks = [r["messages"][0]["content"] for r in srv.requests]
        # the expansion ranks the paraphrased row first: one expansion, one ANSWER
        assert asks[0].startswith("Write up to five") and len(asks) == 2
    with FakeOpenAI() as srv:  # dead: bounded retries, then the breaker fails fast
        srv.script = [(500, {"error": {"message": "boom"}}, 0.0)]
        sql = "SELECT ANSWER(reviews, 'is it loud?') FROM r WHERE id = 1"
        with using(backend=f"openai:m@{srv.url}", embedder="none", retries=2) as cfg:
            cfg.cached.clear()
            with img.session(False) as s:
                res = s.execute(sql)
                assert not res.ok and "HTTP 500" in res.error
                n = len(srv.requests)
                res = s.execute(sql)
                assert not res.ok and "circuit open" in res.error and len(srv.requests) == n


def test_loading_the_embedder_is_not_the_statements_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clarisql.envs.suql import config as suql_config

    def slow_load(name: str) -> HashingEmbedder:
        time.sleep(0.8)  # a model loading, once per process
        return HashingEmbedder()

    monkeypatch.setattr(suql_config, "make_embedder", slow_load)
    img = get_image(_db(tmp_path / "r.sqlite", rows=200))
    with using(backend="offline", embedder="minilm") as cfg:
        cfg.cached.clear()
        with img.session(False, SessionLimits(timeout_s=0.5)) as s:
            res = s.execute(Q.replace("LIMIT 5", "LIMIT 2"))
            assert res.ok, res.error
            assert {r[0] for r in res.rows} == {i for i in ROMANTIC if i <= 200}  # both of them
            assert s.extensions["suql"].current.evaluations < 50


def test_expansion_calls_count_as_model_calls_in_the_metrics(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from clarisql.rollouts.metrics import model_call_metrics

    img = get_image(_db(tmp_path / "r.sqlite"))
    with using(backend="offline", embedder="hashing") as cfg:
        cfg.cached.clear()
        with img.session(False) as s:
            assert s.execute(Q).ok
            ep = s.extensions["suql"].episode_stats()
    assert ep["expansion_calls"] == 1 and ep["model_calls"] == ep["evaluations"] > 0
    m = model_call_metrics([SimpleNamespace(suql=ep)])  # type: ignore[list-item]
    assert m["model_calls"] == ep["model_calls"] + 1
