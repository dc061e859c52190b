"""`clarisql synth` end to end, and its answers to bad input (one line, exit 2, no traceback)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clarisql.cli import main

from ._fake_openai import FakeOpenAI
from ._synth_lake import write_lake


@pytest.fixture(scope="module")
def csv_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lake(tmp_path_factory.mktemp("lake") / "csv")


def test_synth_then_eval_every_baseline(csv_lake: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "suite"
    assert main(["synth", str(csv_lake), "--out", str(out), "--tasks", "40", "--seed", "2"]) == 0
    said = capsys.readouterr().out
    assert "40 tasks" in said and (out / "tasks.jsonl").is_file() and (out / "SUITE.md").is_file()
    assert (out / "lake.sqlite").is_file()
    metrics = {}
    for policy in ("oracle", "naive", "abstain-all"):
        run = tmp_path / policy
        assert (
            main(
                ["eval", "--suite", str(out / "tasks.jsonl"), "--policy", policy, "--out", str(run)]
            )
            == 0
        )
        metrics[policy] = json.loads((run / "metrics.json").read_text())
    assert metrics["oracle"]["pass@1"] == 1.0 and metrics["oracle"]["phi_10"] == 1.0
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    share = sum(not t["answerable"] for t in tasks) / len(tasks)
    assert metrics["abstain-all"]["phi_0"] == pytest.approx(share)
    for cat, m in metrics["naive"]["by_category"].items():
        if cat not in ("well-specified", "write"):
            assert m["pass@1"] < metrics["oracle"]["by_category"][cat]["pass@1"], cat


def test_mixture_option_and_sqlite_plus_csv_lake(csv_lake: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    assert main(["synth", str(csv_lake), "--out", str(first), "--tasks", "10"]) == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "extra.csv").write_text(
        "code,label\n" + "".join(f"c{i},L{i % 13}\n" for i in range(50))
    )
    out = tmp_path / "both"
    mix = "well-specified=1,unanswerable=1"
    args = [
        "synth",
        str(first / "lake.sqlite"),
        str(other),
        "--out",
        str(out),
        "--tasks",
        "12",
        "--mixture",
        mix,
    ]
    assert main(args) == 0
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert len(tasks) == 12 and sum(not t["answerable"] for t in tasks) == 6
    names = {
        r[0] for r in sqlite3.connect(out / "lake.sqlite").execute("SELECT name FROM sqlite_master")
    }
    assert {"customers", "orders", "sales_2022", "sales_2023", "extra"} <= names
    # a table with no usable column beside usable ones: left out, and SUITE.md says so
    (other / "tiny.csv").write_text("a,b\n1,x\n2,y\n")
    assert (
        main(["synth", str(first / "lake.sqlite"), str(other), "--out", str(tmp_path / "t")]) == 0
    )
    assert "tiny: every column is low-information" in (tmp_path / "t" / "SUITE.md").read_text()


def _bad(tmp_path: Path, kind: str) -> list[str]:
    p = tmp_path / kind
    if kind == "empty-folder":
        p.mkdir()
    elif kind == "missing":
        pass
    elif kind == "ragged-csv":
        p.mkdir()
        (p / "t.csv").write_text("a,b\n1,2\n3,4,5\n")
    elif kind == "binary-csv":
        p.mkdir()
        (p / "t.csv").write_bytes(b"\x00\x01\x02\xff" * 100)
    elif kind == "header-only-csv":
        p.mkdir()
        (p / "t.csv").write_text("a,b\n")
    elif kind == "not-sqlite":
        p = tmp_path / "data.db"
        p.write_text("hello, I am not a database\n")
    elif kind == "corrupt-sqlite":
        p = tmp_path / "broken.sqlite"
        p.write_bytes(b"SQLite format 3\x00" + b"\x10\x00\x01\x01" + b"\xab" * 5000)
    elif kind == "no-usable-column":
        p.mkdir()
        (p / "t.csv").write_text("a,b\n1,x\n2,y\n3,x\n")
    return ["synth", str(p), "--out", str(tmp_path / "out")]


BAD = {
    "empty-folder": "holds no CSV files",
    "missing": "does not exist",
    "ragged-csv": "does not parse",
    "binary-csv": "does not parse",
    "header-only-csv": "no data rows",
    "not-sqlite": "is not an SQLite database",
    "corrupt-sqlite": "corrupt",
    "no-usable-column": "no usable column",
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_input_one_line_exit_2(kind: str, tmp_path: Path, capsys) -> None:
    assert main(_bad(tmp_path, kind)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("clarisql synth: error:") and BAD[kind] in err, err


@pytest.mark.parametrize(
    "extra,msg",
    [
        (["--tasks", "0"], "at least 1"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--mixture", "nonsense"], "--mixture"),
        (["--llm", "gpt"], "openai:MODEL@URL"),
        (["--withhold", "-1"], "--withhold must be at least 0"),
    ],
)
def test_bad_options(csv_lake: Path, tmp_path: Path, capsys, extra: list[str], msg: str) -> None:
    assert main(["synth", str(csv_lake), "--out", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1


def test_llm_endpoint_down_is_one_clear_line_and_no_suite(
    csv_lake: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """A suite asked to go through the LLM is never made offline instead."""
    srv = FakeOpenAI()
    url = srv.url
    srv.close()
    out = tmp_path / "s"
    args = ["synth", str(csv_lake), "--out", str(out), "--tasks", "8", "--llm", f"openai:m@{url}"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"clarisql synth: error: --llm openai:m@{url}: LLM endpoint"), err
    assert "leave out --llm" in err
    assert not (out / "tasks.jsonl").exists()


def test_two_sqlite_sources_make_one_lake(csv_lake: Path, tmp_path: Path) -> None:
    """The second SQLite source is attached read-only (a URI filename), its tables renamed when
    they clash with the first's."""
    first = tmp_path / "first"
    assert main(["synth", str(csv_lake), "--out", str(first), "--tasks", "10"]) == 0
    second = tmp_path / "second.sqlite"
    con = sqlite3.connect(second)
    con.execute("CREATE TABLE customers(id INTEGER, city TEXT)")
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"C{i % 11}") for i in range(60)])
    con.commit()
    con.close()
    out = tmp_path / "lake2"
    assert main(["synth", str(first / "lake.sqlite"), str(second), "--out", str(out)]) == 0
    names = [
        r[0]
        for r in sqlite3.connect(out / "lake.sqlite").execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'customers%'"
        )
    ]
    assert len(names) == 2
