"""`--describe FILE`: a data dictionary names columns in questions and reaches the agent's
schema; `--audit N` writes the flaw table and a stratified review sheet."""

from __future__ import annotations

from pathlib import Path

import pytest

from clarisql.cli import main
from clarisql.envs.synth.describe import load_descriptions
from clarisql.envs.synth.names import clear_descriptions, in_words, set_descriptions, speakable
from clarisql.envs.synth.types import SynthError

from ._synth_lake import write_lake


def test_csv_and_yaml_dictionaries(tmp_path: Path) -> None:
    c = tmp_path / "d.csv"
    c.write_text("Field,Meaning,Table\nqty,number of units ordered,orders\nG,games played,\n")
    assert load_descriptions(c) == {"orders.qty": "number of units ordered", "G": "games played"}
    y = tmp_path / "d.yaml"
    y.write_text("orders:\n  qty: units ordered (count)\nG: games played\n")
    assert load_descriptions(y) == {"orders.qty": "units ordered (count)", "G": "games played"}
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(SynthError, match="needs a column field"):
        load_descriptions(bad)


def test_descriptions_name_columns_and_make_cryptic_names_speakable() -> None:
    try:
        assert not speakable("G")
        set_descriptions({"teams.G": "Games played, regular season", "ab": "at bats"})
        assert speakable("G") and in_words("G") == "games played"
        assert in_words("ab") == "at bats"
    finally:
        clear_descriptions()
    assert in_words("G") == "g" and not speakable("G")


def test_synth_describe_and_audit_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = write_lake(tmp_path / "csv", seed=1)
    d = tmp_path / "dict.csv"
    d.write_text(
        "table,column,description\norders,amount,order value in euros\n"
        "orders,quantity,units ordered\ncustomers,region,sales territory\n"
        "customers,segment,market segment\norders,product,article name\n"
    )
    out = tmp_path / "out"
    args = ["synth", str(folder), "--out", str(out), "--tasks", "40", "--describe", str(d)]
    assert main([*args, "--audit", "8"]) == 0
    assert "order value in euros" in (out / "lake.description.md").read_text()
    text = (out / "tasks.jsonl").read_text()
    named = ("order value in euros", "units ordered", "sales territory", "market segment")
    assert any(w in text for w in named)
    audit = (out / "AUDIT.md").read_text()
    assert "| join-path-disagreement |" in audit and audit.count("Verdict:") == 8
    # the agent sees the dictionary above the schema
    from clarisql.envs.env import ClarifySQLEnv

    env = ClarifySQLEnv(str(out / "tasks.jsonl"))
    obs, _ = env.reset(seed=0)
    assert "order value in euros" in str(obs)
    assert main([*args, "--audit", "0"]) == 2
    assert "--audit must be at least 1" in capsys.readouterr().err


def test_codebooks_found_beside_the_source(tmp_path: Path) -> None:
    from clarisql.envs.synth.describe import dictionary_files, found_descriptions

    folder = write_lake(tmp_path / "csv", seed=1)
    (folder / "codebook.csv").write_text(
        "variable,description\namount,order value in euros\nsegment,market segment\n"
    )
    (folder / "README.md").write_text(
        "# Sales data\n\nInstall nothing.\n\n| Column | Meaning |\n|---|---|\n"
        "| region | sales territory |\n\n- `quantity`: units ordered\n- Install: not a column\n"
    )
    found, used = found_descriptions([folder])
    assert found == {
        "amount": "order value in euros",
        "segment": "market segment",
        "region": "sales territory",
        "quantity": "units ordered",
    }
    assert [p.name for p in used] == ["README.md", "codebook.csv"]
    # beside a database file: only files named for it or as a dictionary
    db = tmp_path / "db" / "shop.sqlite"
    db.parent.mkdir()
    db.write_bytes(b"")
    (db.parent / "shop.yaml").write_text("orders:\n  qty: units ordered\n")
    (db.parent / "notes.md").write_text("- `qty`: not a dictionary file\n")
    (db.parent / "other.csv").write_text("column,description\nqty,x\n")
    assert [p.name for p in dictionary_files([db])] == ["shop.yaml"]
    out = tmp_path / "out"
    assert main(["synth", str(folder), "--out", str(out), "--tasks", "40"]) == 0
    # the codebook is no table, and its words reach the questions and the agent's schema
    from clarisql.envs.synth.profile import profile_lake

    assert "codebook" not in {t.name for t in profile_lake(out / "lake.sqlite").tables}
    assert "order value in euros" in (out / "lake.description.md").read_text()
    text = (out / "tasks.jsonl").read_text()
    assert any(w in text for w in ("order value in euros", "units ordered", "sales territory"))
