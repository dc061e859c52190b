"""The per-table digest cache of a database image, kept on disk and shared by processes.

Contract: :func:`load` returns the table digests stored for ``(image content, digest config)``
(empty when none), :func:`load_counts` the tables' row counts; :func:`save` and
:func:`save_counts` merge new ones into the file and write it atomically
(``os.replace``), so concurrent processes never see a half-written file and a lost race only
costs a recomputation. A missing, unreadable or foreign file is ignored (recomputed), never an
error. Files live in ``<cache dir>/digests/<content key>.json`` (see
:func:`clarisql.envs.sandbox.image_files.content_key`); ``CLARISQL_DIGEST_CACHE=0`` turns it off.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from clarisql.envs.sandbox.image_files import cache_dir

_VERSION = 1


def enabled() -> bool:
    return os.environ.get("CLARISQL_DIGEST_CACHE", "1") != "0"


def _path(content_key: str) -> Path:
    return cache_dir() / "digests" / f"{content_key}.json"


def _config_id(config_key: Any) -> str:
    return json.dumps(config_key, default=list)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("version") == _VERSION else {}


def load(content_key: str, config_key: Any) -> dict[str, tuple[tuple[str, ...], int, int]]:
    """``{table: (columns, count, total)}`` stored for this content and digest config."""
    if not enabled():
        return {}
    rows = _read(_path(content_key)).get("configs", {}).get(_config_id(config_key), {})
    out = {}
    for table, v in rows.items():
        try:
            cols, count, total = v
            out[table] = (tuple(cols), int(count), int(total, 16))
        except (TypeError, ValueError):
            continue
    return out


def save(content_key: str, config_key: Any, digests: dict[str, Any]) -> None:
    """Merge ``{table: TableDigest}`` into the file (best effort: an OS error is ignored)."""
    if not enabled() or not digests:
        return
    path = _path(content_key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _read(path) or {"version": _VERSION, "configs": {}}
        rows = data["configs"].setdefault(_config_id(config_key), {})
        for table, d in digests.items():
            rows[table] = [list(d.columns), d.count, f"{d.total:x}"]
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def load_counts(content_key: str) -> dict[str, int]:
    """``{table: row count}`` stored for this content (counts do not depend on a config)."""
    if not enabled():
        return {}
    rows = _read(_path(content_key)).get("row_counts", {})
    return {t: n for t, n in rows.items() if isinstance(n, int)} if isinstance(rows, dict) else {}


def save_counts(content_key: str, counts: dict[str, int]) -> None:
    """Merge ``{table: row count}`` into the file (best effort, like :func:`save`)."""
    if not enabled() or not counts:
        return
    path = _path(content_key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _read(path) or {"version": _VERSION, "configs": {}}
        data.setdefault("row_counts", {}).update(counts)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


__all__ = ["enabled", "load", "load_counts", "save", "save_counts"]
