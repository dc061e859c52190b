"""A data dictionary (``clarisql synth --describe FILE``): column descriptions as CSV or YAML.

Contract
- :func:`load_descriptions` reads ``FILE`` into ``{"table.column" or "column": words}``:
  - CSV with a header naming a column field (``column``, ``field``, ``name``, ``attribute`` or
    ``variable``), a description field (``description``, ``desc``, ``meaning``, ``label`` or
    ``definition``) and optionally ``table`` (``file``, ``dataset``);
  - YAML: ``{table: {column: words}}``, ``{column: words}``, ``{"table.column": words}`` or a
    list of ``{table, column, description}`` records.
  Anything else is a :class:`~clarisql.envs.synth.SynthError` with one line saying why.
- The descriptions name columns in questions (:func:`clarisql.envs.synth.names.in_words`) and
  make a cryptic name speakable; :func:`dictionary_text` renders the described columns that
  exist in the lake for the schema the agent sees (``lake.description.md`` beside the database,
  which a file suite shows above the table list).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from clarisql.envs.synth.types import LakeProfile, SynthError

_COLUMN = ("column", "field", "name", "attribute", "variable", "column_name", "field_name")
_DESC = ("description", "desc", "meaning", "label", "definition", "column_description")
_TABLE = ("table", "file", "dataset", "table_name")
MAX_BYTES = 4_000_000


def load_descriptions(path: str | Path) -> dict[str, str]:
    """The dictionary in ``path`` (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise SynthError(f"--describe {p}: no such file")
    if p.stat().st_size > MAX_BYTES:
        raise SynthError(f"--describe {p}: larger than {MAX_BYTES // 1_000_000} MB")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise SynthError(f"--describe {p}: not UTF-8 text") from None
    out = _yaml(p, text) if p.suffix.lower() in (".yaml", ".yml") else _csv(p, text)
    if not out:
        raise SynthError(f"--describe {p}: no column descriptions found")
    return out


def _pick(header: list[str], names: tuple[str, ...]) -> int | None:
    low = [h.strip().lower() for h in header]
    for n in names:
        if n in low:
            return low.index(n)
    return None


def _csv(p: Path, text: str) -> dict[str, str]:
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        return {}
    header = rows[0]
    ci, di, ti = _pick(header, _COLUMN), _pick(header, _DESC), _pick(header, _TABLE)
    if ci is None or di is None:
        raise SynthError(
            f"--describe {p}: the CSV header needs a column field ({', '.join(_COLUMN[:3])}) and "
            f"a description field ({', '.join(_DESC[:3])}); found {', '.join(header)}"
        )
    out = {}
    for r in rows[1:]:
        if len(r) <= max(ci, di) or not r[ci].strip() or not r[di].strip():
            continue
        table = r[ti].strip() if ti is not None and ti < len(r) and r[ti].strip() else None
        out[f"{table}.{r[ci].strip()}" if table else r[ci].strip()] = r[di].strip()
    return out


def _yaml(p: Path, text: str) -> dict[str, str]:
    import yaml

    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise SynthError(f"--describe {p}: not valid YAML ({str(e).splitlines()[0]})") from None
    out: dict[str, str] = {}
    if isinstance(data, list):
        for rec in data:
            if not isinstance(rec, dict):
                continue
            low = {str(k).lower(): v for k, v in rec.items()}
            col = next((low[k] for k in _COLUMN if k in low), None)
            desc = next((low[k] for k in _DESC if k in low), None)
            table = next((low[k] for k in _TABLE if k in low), None)
            if col and desc:
                out[f"{table}.{col}" if table else str(col)] = str(desc)
    elif isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, dict):
                for col, desc in v.items():
                    if desc is not None:
                        out[f"{k}.{col}"] = str(desc)
            elif v is not None:
                out[str(k)] = str(v)
    else:
        raise SynthError(f"--describe {p}: expected a mapping or a list of records")
    return out


def dictionary_text(lake: LakeProfile, described: dict[str, str]) -> str:
    """The described columns that exist in the lake, one line each (for the agent's schema)."""
    low = {k.lower(): v for k, v in described.items()}
    lines = []
    for t in lake.tables:
        for c in t.columns:
            d = low.get(f"{t.name}.{c.name}".lower(), low.get(c.name.lower()))
            if d:
                lines.append(f"- {t.name}.{c.name}: {' '.join(d.split())}")
    return ("Column descriptions:\n" + "\n".join(lines)) if lines else ""


__all__ = ["dictionary_text", "load_descriptions"]
