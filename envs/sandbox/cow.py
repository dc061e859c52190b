"""Copy-on-write database files: a writable episode's memory grows with the pages it changes.

Contract
- :func:`open_cow` opens a writable SQLite connection over a read-only base database file. Reads
  of pages the connection never wrote come from the base file (through the OS page cache, so
  every session and every process on the machine shares them); pages it writes land in a
  private in-memory overlay. The base file is never written.
- :func:`reset_cow` drops the overlay: the connection sees the base file again. It costs
  O(pages changed), not O(database), and makes SQLite discard its own page cache (see below).
- :func:`overlay_bytes` is the overlay's size (the session's private copy of changed pages).
- The connection runs with ``journal_mode=MEMORY`` (the rollback journal never touches disk),
  and on a frozen clock (:mod:`clarisql.envs.sandbox.clock`), like every writable session.
- It runs in ``locking_mode=EXCLUSIVE``: nobody else ever opens the overlay, and in this mode
  SQLite keeps its lock and its page cache between transactions instead of locking, checking
  for a hot journal and re-reading page 1 through the (Python) VFS at every statement (7 Python
  calls, ~6 µs, more than a small statement itself). So SQLite never looks at the file by
  itself after a reset: :func:`reset_cow` purges its page cache (``SQLITE_FCNTL_RESET_CACHE``);
  the next statement reads page 1 again and reloads the schema if the episode changed it.

Why a hand-written VFS: SQLite has no built-in copy-on-write mode for a file (WAL writes to the
base's directory and shares its changes with every reader; ``immutable=1`` forbids writes), and
apsw exposes the VFS interface for exactly this. A page read that misses SQLite's page cache
costs one Python call and one ``pread``.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import weakref
from pathlib import Path

import apsw

from clarisql.envs.sandbox.clock import _FROZEN_UNIX_MS, _JULIAN_EPOCH_MS

VFS_NAME = "clarisql-cow"
_NAME_PREFIX = "clarisql-cow-"


class _Overlay:
    """The private pages of one connection over one base file."""

    def __init__(self, base: Path, vfs: _CowVFS | None = None, name: str = ""):
        self.base = base
        self.vfs, self.name = vfs, name
        self.fd = os.open(base, os.O_RDONLY)
        self.base_size = os.fstat(self.fd).st_size
        self.size = self.base_size
        self.pages: dict[int, bytearray] = {}
        self.page_size = _page_size(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.vfs is not None:
            with self.vfs.lock:
                self.vfs.files.pop(self.name, None)
            self.vfs = None

    # page-granular storage; SQLite reads and writes the main database in whole pages, apart
    # from a few header reads, which the general path below also serves
    def read(self, amount: int, offset: int) -> bytes:
        ps, out = self.page_size, bytearray()
        end = min(offset + amount, self.size)
        pos = offset
        while pos < end:
            pno, inner = divmod(pos, ps)
            n = min(ps - inner, end - pos)
            page = self.pages.get(pno)
            if page is not None:
                out += page[inner : inner + n]
            else:
                chunk = os.pread(self.fd, n, pos) if pos < self.base_size else b""
                out += chunk + bytes(n - len(chunk))
            pos += n
        return bytes(out)

    def write(self, data: bytes, offset: int) -> None:
        ps, pos, i = self.page_size, offset, 0
        while i < len(data):
            pno, inner = divmod(pos, ps)
            n = min(ps - inner, len(data) - i)
            page = self.pages.get(pno)
            if page is None:
                if inner == 0 and n == ps:
                    page = bytearray(ps)
                else:
                    page = bytearray(self.read(ps, pno * ps).ljust(ps, b"\0"))
                self.pages[pno] = page
            page[inner : inner + n] = data[i : i + n]
            pos += n
            i += n
        self.size = max(self.size, offset + len(data))

    def truncate(self, size: int) -> None:
        self.size = size
        last = (size + self.page_size - 1) // self.page_size
        for pno in [p for p in self.pages if p >= last]:
            del self.pages[pno]


def _page_size(fd: int) -> int:
    header = os.pread(fd, 100, 0)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return 4096
    ps = int.from_bytes(header[16:18], "big")
    return 65536 if ps == 1 else ps


class _CowFile:
    """The VFS file object SQLite drives for a copy-on-write main database."""

    def __init__(self, overlay: _Overlay):
        self.o = overlay

    def xRead(self, amount: int, offset: int) -> bytes:  # noqa: N802 - SQLite's names
        return self.o.read(amount, offset)

    def xWrite(self, data: bytes, offset: int) -> None:  # noqa: N802
        self.o.write(bytes(data), offset)

    def xTruncate(self, size: int) -> None:  # noqa: N802
        self.o.truncate(size)

    def xSync(self, flags: int) -> None:  # noqa: N802
        pass

    def xFileSize(self) -> int:  # noqa: N802
        return self.o.size

    def xLock(self, level: int) -> None:  # noqa: N802 - one private connection per file
        pass

    def xUnlock(self, level: int) -> None:  # noqa: N802
        pass

    def xCheckReservedLock(self) -> bool:  # noqa: N802
        return False

    def xFileControl(self, op: int, ptr: int) -> bool:  # noqa: N802
        return False

    def xSectorSize(self) -> int:  # noqa: N802
        return 4096

    def xDeviceCharacteristics(self) -> int:  # noqa: N802
        return 0

    def xClose(self) -> None:  # noqa: N802 - the connection closed: its pages are freed now
        self.o.pages.clear()
        self.o.close()


class _CowVFS(apsw.VFS):
    """Serves registered copy-on-write names; anything else (temp files) from the default VFS."""

    def __init__(self) -> None:
        super().__init__(VFS_NAME, base="")
        self.files: dict[str, _Overlay] = {}
        self.lock = threading.Lock()

    def xOpen(self, name, flags):  # noqa: N802
        fname = name.filename() if isinstance(name, apsw.URIFilename) else name
        with self.lock:
            overlay = self.files.get(fname) if isinstance(fname, str) else None
        if overlay is not None:
            return _CowFile(overlay)
        return super().xOpen(name, flags)

    def xAccess(self, pathname: str, flags: int) -> bool:  # noqa: N802
        if pathname.startswith(_NAME_PREFIX):  # the main file exists; no journal ever does
            with self.lock:
                return pathname in self.files
        return super().xAccess(pathname, flags)

    def xFullPathname(self, name: str) -> str:  # noqa: N802
        return name if name.startswith(_NAME_PREFIX) else super().xFullPathname(name)

    def xDelete(self, filename: str, syncdir: bool) -> None:  # noqa: N802
        if not filename.startswith(_NAME_PREFIX):
            super().xDelete(filename, syncdir)

    def xCurrentTimeInt64(self) -> int:  # noqa: N802 - the frozen clock of writable sessions
        return _JULIAN_EPOCH_MS + _FROZEN_UNIX_MS

    def xCurrentTime(self) -> float:  # noqa: N802
        return (_JULIAN_EPOCH_MS + _FROZEN_UNIX_MS) / 86_400_000.0


_VFS: _CowVFS | None = None
_VFS_LOCK = threading.Lock()
_IDS = itertools.count()
#: connection -> its overlay (weak: a closed, collected connection drops out)
_OVERLAYS: weakref.WeakKeyDictionary[apsw.Connection, _Overlay] = weakref.WeakKeyDictionary()


def _vfs() -> _CowVFS:
    global _VFS
    with _VFS_LOCK:
        if _VFS is None:
            _VFS = _CowVFS()
        return _VFS


def open_cow(base: str | Path) -> apsw.Connection:
    """A writable connection whose writes stay in memory, over the read-only file ``base``."""
    vfs = _vfs()
    name = f"{_NAME_PREFIX}{os.getpid()}-{next(_IDS)}"
    overlay = _Overlay(Path(base), vfs, name)
    with vfs.lock:
        vfs.files[name] = overlay
    try:
        conn = apsw.Connection(
            name, flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE, vfs=VFS_NAME
        )
        conn.execute("PRAGMA journal_mode = MEMORY")
        conn.execute("PRAGMA main.locking_mode = EXCLUSIVE")
        conn.execute("PRAGMA main.synchronous = OFF")  # nothing here is durable: no xSync calls
    except BaseException:
        overlay.close()
        raise
    _OVERLAYS[conn] = overlay
    return conn


@atexit.register
def _close_at_exit() -> None:
    """Close the copy-on-write connections still open when the interpreter exits.

    Closing one calls into its Python VFS file (SQLite releases its exclusive lock); left to the
    interpreter's last garbage collection (a session never closed, a pooled connection of an
    image in a reference cycle), that call can come after apsw's own module state is gone and
    crash the process at exit.
    """
    for conn in list(_OVERLAYS.keys()):
        try:
            conn.close()
        except Exception:  # (in use by another thread: left to the interpreter)
            pass


def is_cow(conn: apsw.Connection) -> bool:
    return conn in _OVERLAYS


def reset_cow(conn: apsw.Connection) -> None:
    """Drop ``conn``'s private pages: it is back to the base file (no transaction may be open)."""
    overlay = _OVERLAYS[conn]
    if conn.in_transaction:
        raise RuntimeError("reset_cow: the connection is inside a transaction")
    overlay.pages.clear()
    overlay.size = overlay.base_size
    # exclusive locking mode: SQLite would go on trusting its cached pages
    conn.file_control("main", apsw.SQLITE_FCNTL_RESET_CACHE, 0)


def database_bytes(conn: apsw.Connection) -> int | None:
    """The size of ``conn``'s database file as SQLite sees it now (base plus growth), or
    ``None`` when ``conn`` is not a copy-on-write connection."""
    o = _OVERLAYS.get(conn)
    return None if o is None else o.size


def overlay_bytes(conn: apsw.Connection) -> int:
    """Bytes of private pages ``conn`` holds now."""
    o = _OVERLAYS.get(conn)
    return 0 if o is None else len(o.pages) * o.page_size


__all__ = ["VFS_NAME", "database_bytes", "is_cow", "open_cow", "overlay_bytes", "reset_cow"]
