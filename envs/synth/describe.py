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
- :func:`found_descriptions` reads the data dictionaries found **beside the sources** without
  ``--describe``: in a CSV folder, or next to a database file, a CSV whose header is a
  dictionary's (a column field and a description field: :func:`is_dictionary_csv`, which
  ingest leaves out of the tables), a YAML file, or a README / codebook / data dictionary in
  Markdown or text (a table with column and description headers, or ``- `col`: words``
  lines). Next to a database file only files named for it or as a dictionary (codebook,
  dictionary, README, variables, fields, columns, metadata, glossary) are read. Unreadable
  files are skipped. ``--describe FILE`` wins where both describe a column.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clarisql.envs.synth.types import LakeProfile, SynthError

_COLUMN = ("column", "field", "name", "attribute", "variable", "column_name", "field_name")
_DESC = ("description", "desc", "meaning", "label", "definition", "column_description")
_TABLE = ("table", "file", "dataset", "table_name")
MAX_BYTES = 4_000_000
#: header names that only a dictionary uses for its column field ("name" alone is data)
_COLUMN_STRICT = ("column", "field", "attribute", "variable", "column_name", "field_name")
_DICT_WORDS = re.compile(
    r"codebook|dictionar|readme|variables|fields|columns|metadata|glossary|schema|data[_ -]?dict",
    re.I,
)
_TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".rst")
_YAML_SUFFIXES = (".yaml", ".yml")
_BULLET = re.compile(r"^\s*[-*]\s+(?:`([^`]+)`|\*\*([^*]+)\*\*)\s*[:\u2014\u2013-]\s*(.+?)\s*$")


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


def is_dictionary_csv(path: str | Path) -> bool:
    """Whether a CSV file is a data dictionary rather than data: its header has a column field
    that only dictionaries use (``column``, ``field``, ``variable``...) and a description field,
    or its name says dictionary/codebook and the header has ``name`` and a description."""
    p = Path(path)
    try:
        with p.open(encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    if _pick(header, _DESC) is None:
        return False
    if _pick(header, _COLUMN_STRICT) is not None:
        return True
    return bool(_DICT_WORDS.search(p.stem)) and _pick(header, _COLUMN) is not None


def _markdown(text: str) -> dict[str, str]:
    """Column descriptions in Markdown or text: tables whose header names a column field and
    a description field, and ``- `col`: words`` / ``- **col**: words`` lines."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1].strip()) <= set("|-: "):
            header = [h.strip().strip("`*") for h in line.strip("|").split("|")]
            ci, di, ti = _pick(header, _COLUMN), _pick(header, _DESC), _pick(header, _TABLE)
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = [c.strip().strip("`*") for c in lines[i].strip().strip("|").split("|")]
                if ci is not None and di is not None and len(cells) > max(ci, di):
                    col, desc = cells[ci], cells[di]
                    table = cells[ti] if ti is not None and ti < len(cells) else ""
                    if col and desc:
                        out[f"{table}.{col}" if table else col] = desc
                i += 1
            continue
        m = _BULLET.match(lines[i])
        if m:
            out[(m.group(1) or m.group(2)).strip()] = m.group(3)
        i += 1
    return out


def _read_found(p: Path) -> dict[str, str]:
    """The descriptions in one file found beside a source ({} when it holds none or fails)."""
    try:
        if p.stat().st_size > MAX_BYTES:
            return {}
        suffix = p.suffix.lower()
        if suffix in (".csv", ".tsv"):
            return load_descriptions(p) if is_dictionary_csv(p) else {}
        if suffix in _YAML_SUFFIXES:
            return load_descriptions(p)
        if suffix in _TEXT_SUFFIXES:
            return _markdown(p.read_text(encoding="utf-8-sig"))
    except (SynthError, OSError, UnicodeDecodeError):
        return {}
    return {}


def dictionary_files(sources: Sequence[str | Path]) -> list[Path]:
    """The files beside ``sources`` that may hold column descriptions (see the module
    docstring), in a stable order."""
    out: list[Path] = []
    for src in map(Path, sources):
        if src.is_dir():
            out += [p for p in sorted(src.iterdir()) if p.is_file() and _candidate(p, None)]
        elif src.is_file():
            out += [
                p
                for p in sorted(src.parent.iterdir())
                if p.is_file() and p != src and _candidate(p, src.stem)
            ]
    return list(dict.fromkeys(out))


def _candidate(p: Path, beside: str | None) -> bool:
    suffix = p.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return (beside is None or bool(_DICT_WORDS.search(p.stem))) and is_dictionary_csv(p)
    if suffix not in (*_YAML_SUFFIXES, *_TEXT_SUFFIXES):
        return False
    named = bool(_DICT_WORDS.search(p.stem))
    return named or (suffix in _YAML_SUFFIXES and (beside is None or p.stem == beside))


def found_descriptions(sources: Sequence[str | Path]) -> tuple[dict[str, str], list[Path]]:
    """The column descriptions found beside ``sources`` and the files that gave some."""
    out: dict[str, str] = {}
    used = []
    for p in dictionary_files(sources):
        got = _read_found(p)
        if got:
            used.append(p)
            for k, v in got.items():
                out.setdefault(k, " ".join(v.split()))
    return out, used


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


__all__ = [
    "dictionary_files",
    "dictionary_text",
    "found_descriptions",
    "is_dictionary_csv",
    "load_descriptions",
]
