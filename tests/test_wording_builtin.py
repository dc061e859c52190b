"""Wording that gives nothing away and ambiguity no explorer resolves, on the built-in suite."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from clarisql.envs.suites.builtin import builtin_suite
from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.db import _pick_attrs

from ._benchmarks import bench


def _bench(name: str):
    return bench(name)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("builtin")


def test_optional_attributes_vary_by_seed() -> None:
    seen = [set(_pick_attrs(random.Random(i))) for i in range(24)]
    for col, *_ in N.OPTIONAL_ATTRS:
        assert any(col in s for s in seen) and any(col not in s for s in seen), col


def test_attribute_questions_are_minimal_pairs(cache: Path) -> None:
    import sqlite3

    suite = builtin_suite(0, cache)
    conn = sqlite3.connect(suite.databases["builtin"].path)
    columns = {
        r[1]
        for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        for r in conn.execute(f"PRAGMA table_info({t})")
    }
    pats = [
        re.compile("^" + re.sub(r"\\\{\w+\\\}", ".+", re.escape(tpl)) + "$", re.I)
        for tpls in N.ATTR_TEMPLATES.values()
        for tpl in tpls
    ]
    optional = {a[0] for a in N.OPTIONAL_ATTRS}
    asked = [t for t in suite.tasks if t.unanswerable_kind in ("column-surface", "column-related")]
    twins = [t for t in suite.tasks if t.metadata["template"].startswith("attr_")]
    assert len(asked) >= 16 and len(twins) >= 8
    for t in asked:  # an attribute this seed lacks, asked with the twins' templates
        assert t.metadata["template"] in optional and t.metadata["template"] not in columns
        assert any(p.match(t.utterance) for p in pats), t.utterance
    for t in twins:  # an attribute this seed has
        assert t.answerable and any(p.match(t.utterance) for p in pats), t.utterance
        assert any(c in (t.gold_sql or "") for c in optional & columns)


def test_no_underspecified_value_is_found_by_an_explorer(cache: Path) -> None:
    audit = _bench("explorer_audit").audit
    suite = builtin_suite(0, cache)
    res = audit(suite.tasks, suite.databases["builtin"].path)
    assert res["underspecified read tasks"] >= 150
    assert res["need no question"] == 0, res
    # every value label leaves >= 2 readings, and no explorer beats a guess among them
    assert res["above chance"] == [], res["above chance"]
    for kind in ("not-exist", "Error"):
        assert res["per kind"][kind]["ambiguous"] == res["per kind"][kind]["labels"]


def test_wording_probe_bounded_on_builtin(cache: Path) -> None:
    pytest.importorskip("sklearn")
    wp = _bench("wording_probe")
    res = wp.run(True, [], cache)
    for r in res.values():
        for name in wp.BOUNDED:
            assert r[name]["pairs"] is not None and r[name]["pairs"] <= 0.65, (name, r[name])
