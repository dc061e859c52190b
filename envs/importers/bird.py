"""BIRD-format folders to a suite.

Input: ``SRC/*.json`` lists of ``{"question_id", "db_id", "question", "evidence", "SQL"}``
records (``dev.json``, ``train.json``) and databases at ``SRC/<split>_databases/<db_id>/<db_id>.sqlite``
(or ``database/``, or ``db_dir``). BIRD's ``evidence`` (the external-knowledge hint the benchmark
gives the model) is part of what the user says: with ``evidence="utterance"`` (default) it follows
the question as ``(Hint: ...)``; with ``"metadata"`` it is kept in ``metadata["evidence"]`` only.
``difficulty`` goes to metadata. Output: see :mod:`clarisql.envs.importers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clarisql.envs.importers.common import (
    ImportFormatError,
    ImportReport,
    SuiteWriter,
    check_source,
    prepare_out,
)
from clarisql.envs.importers.spider import import_records, record_files

EVIDENCE_MODES = ("utterance", "metadata")


def import_bird(
    src: str | Path,
    out: str | Path,
    *,
    files: list[str] | None = None,
    db_dir: str | Path | None = None,
    evidence: str = "utterance",
    limit: int | None = None,
    link: bool = False,
) -> ImportReport:
    """Import a BIRD-format folder ``src`` into suite folder ``out`` (see the module docstring)."""
    if evidence not in EVIDENCE_MODES:
        raise ImportFormatError(f"evidence must be one of {EVIDENCE_MODES}, got {evidence!r}")
    s = check_source(src)
    w = SuiteWriter("bird", s, prepare_out(out), link=link)

    def utterance(rec: dict[str, Any]) -> str:
        q, ev = rec["question"].strip(), str(rec.get("evidence") or "").strip()
        return f"{q} (Hint: {ev})" if ev and evidence == "utterance" else q

    def extra(rec: dict[str, Any]) -> dict[str, Any]:
        return {k: rec[k] for k in ("evidence", "difficulty") if rec.get(k) not in (None, "")}

    for stem, records in record_files(s, files, "SQL"):
        import_records(
            w,
            s,
            stem,
            records,
            sql_key="SQL",
            db_dir=Path(db_dir) if db_dir else None,
            utterance=utterance,
            extra=extra,
            limit=limit,
        )
    return w.finish()
