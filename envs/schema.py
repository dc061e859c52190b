"""Schema summaries shown to the agent (one line per table, cached per database image)."""

from __future__ import annotations

import threading

import apsw

from clarisql.envs.sandbox.database import DatabaseImage

_CACHE: dict[tuple[str, str | None], str] = {}
_LOCK = threading.Lock()


def schema_summary(image: DatabaseImage, description: str | None = None) -> str:
    """``table(col TYPE, ...)`` lines for every table and view, after an optional description."""
    key = (image.key, description)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    with image.reading() as conn:
        lines = []
        objs = conn.execute(
            "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
        ).fetchall()
        for name, typ in objs:
            try:
                cols = conn.execute(
                    "SELECT name, type FROM pragma_table_info(?)", (name,)
                ).fetchall()
            except apsw.Error as e:  # a view SQLite cannot compile (e.g. MySQL syntax in pagila)
                lines.append(f"VIEW {name}(unusable: {e})")
                continue
            body = ", ".join(f"{c} {t}".strip() for c, t in cols)
            lines.append(f"{'VIEW ' if typ == 'view' else ''}{name}({body})")
    text = ("Database tables:\n" if lines else "The database has no tables.\n") + "\n".join(lines)
    if description:
        text = description.strip() + "\n\n" + text
    with _LOCK:
        _CACHE[key] = text
    return text
