"""Where the headless Chromium that opens report pages comes from (tests, benchmarks, docs).

Contract: :func:`chromium_path` is ``$CLARISQL_CHROMIUM`` when set (``None`` if that file does
not exist), else the first of ``chromium`` / ``chromium-browser`` / ``google-chrome`` on
``PATH``, else ``None``. :data:`CHROMIUM_ARGS` are the flags every launch uses (no sandbox, no
GPU, no background traffic), so a headless run on a CI machine needs no display and no network.
"""

from __future__ import annotations

import os
import shutil

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    """The Chromium binary to launch (see the module docstring)."""
    env = os.environ.get("CLARISQL_CHROMIUM")
    if env:
        return env if os.path.exists(env) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


__all__ = ["CHROMIUM_ARGS", "chromium_path"]
