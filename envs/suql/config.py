"""The process-wide SUQL configuration: which backend answers ANSWER/SUMMARY (cached), which
embedder ranks rows, the compiler's cut factor; read once from the ``CLARISQL_SUQL_*`` environment
variables, changed with :func:`configure` or temporarily with :func:`using`.

Contract: depends on the backends and the embedder only (never on the runtime), so the runtime
and the session extension can both read it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.suql.backends import Backend, CachedBackend, OfflineBackend, OpenAIBackend
from clarisql.envs.suql.embed import Embedder, make_embedder


def make_backend(spec: str | Backend) -> Backend:
    """``"offline"`` or ``"openai:MODEL@BASE_URL"`` (or a backend instance)."""
    if not isinstance(spec, str):
        return spec
    if spec == "offline":
        return OfflineBackend()
    if spec.startswith("openai:") and "@" in spec:
        model, _, url = spec[len("openai:") :].partition("@")
        return OpenAIBackend(model, url)
    raise ValueError(f"unknown SUQL backend {spec!r}: expected 'offline' or 'openai:MODEL@URL'")


@dataclass
class SuqlConfig:
    """Backend (cached), embedder name for the ranking, cut factor ``k`` (0 = exact)."""

    cached: CachedBackend
    embedder_name: str = "auto"
    k: int = 0
    _embedder: Embedder | None = field(default=None, repr=False)
    #: False: run statements as written (no compiler), e.g. to measure what it saves
    optimize: bool = True
    #: expand ANSWER questions (backend ``expand``) before ranking rows by similarity
    expand: bool = True

    def embedder(self) -> Embedder | None:
        if self.embedder_name == "none":
            return None
        if self._embedder is None:
            self._embedder = make_embedder(self.embedder_name)
        return self._embedder


_LOCK = threading.Lock()
_CONFIG: SuqlConfig | None = None


def _from_env() -> SuqlConfig:
    return SuqlConfig(
        CachedBackend(make_backend(os.environ.get("CLARISQL_SUQL_BACKEND", "offline"))),
        os.environ.get("CLARISQL_SUQL_EMBEDDER", "auto"),
        int(os.environ.get("CLARISQL_SUQL_K", "0")),
        expand=os.environ.get("CLARISQL_SUQL_EXPAND", "1") not in ("0", "false", "no"),
    )


def get_config() -> SuqlConfig:
    global _CONFIG
    cfg = _CONFIG  # read once per session: no lock once set (a read of a global is atomic)
    if cfg is not None:
        return cfg
    with _LOCK:
        if _CONFIG is None:
            _CONFIG = _from_env()
        return _CONFIG


def configure(
    backend: str | Backend | None = None,
    embedder: str | None = None,
    k: int | None = None,
    retries: int | None = None,
    optimize: bool | None = None,
    expand: bool | None = None,
) -> SuqlConfig:
    """Change the process-wide configuration (unchanged parts kept); returns the new one."""
    global _CONFIG
    old = get_config()
    cached = old.cached
    if backend is not None or retries is not None:
        cached = CachedBackend(
            make_backend(backend) if backend is not None else old.cached.backend,
            retries=old.cached.retries if retries is None else retries,
        )
    new = SuqlConfig(
        cached,
        old.embedder_name if embedder is None else embedder,
        old.k if k is None else int(k),
        old._embedder if embedder is None else None,
        old.optimize if optimize is None else bool(optimize),
        old.expand if expand is None else bool(expand),
    )
    with _LOCK:
        _CONFIG = new
    return new


@contextlib.contextmanager
def using(**kw: Any) -> Iterator[SuqlConfig]:
    """Temporarily :func:`configure` (restores the previous configuration on exit)."""
    global _CONFIG
    prev = get_config()
    try:
        yield configure(**kw)
    finally:
        with _LOCK:
            _CONFIG = prev
