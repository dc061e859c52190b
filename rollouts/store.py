"""Crash-safe trajectory files: one JSON object per finished episode, appended and flushed.

Durability contract
- Only one process (the runner's main process) appends to a run's ``trajectories.jsonl``.
- Each line is written with a single ``os.write`` on an ``O_APPEND`` descriptor, so once
  :meth:`TrajectoryStore.append` returns the line is in the kernel and survives ``kill -9`` of
  the runner. ``fsync`` is called at most every ``fsync_interval_s`` seconds and on close, to
  survive an operating-system crash too (at most that much is lost then).
- A kill in the middle of a write can leave a truncated last line: :meth:`TrajectoryStore.open`
  cuts it off (the episode is simply run again); a damaged line *before* the last one is
  reported as an error, since it cannot come from an interrupted append.
- Episodes are keyed by ``(task_id, trial)``; a key already in the file is never written again,
  and readers keep the first line of a key.

The run folder around it: ``run.json`` (the run's configuration identity, one entry per session;
:func:`check_run_dir` refuses a folder that holds a different run, so resuming never mixes two
runs) and ``errors.jsonl`` (:class:`ErrorLog`: episodes whose policy failed, retried on resume).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clarisql.rollouts.plan import RunConfigError

Key = tuple[str, int]

RUN_FILE = "run.json"
TRAJECTORY_FILE = "trajectories.jsonl"
ERRORS_FILE = "errors.jsonl"


class TrajectoryFileError(RuntimeError):
    """A trajectory file is damaged in a way a crash cannot explain."""


def line_key(line: dict[str, Any]) -> Key:
    return (str(line["task_id"]), int(line.get("trial", 0)))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return "x'" + bytes(obj).hex() + "'"
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return repr(obj)


def dumps_line(line: dict[str, Any]) -> bytes:
    """One trajectory line as UTF-8 bytes ending in a newline (blobs as ``x'hex'`` strings)."""
    return (json.dumps(line, ensure_ascii=False, default=_json_default) + "\n").encode("utf-8")


def _scan(data: bytes, path: Path) -> tuple[list[dict[str, Any]], int]:
    """Parse lines; return them and the byte length of the intact prefix."""
    lines: list[dict[str, Any]] = []
    pos = 0
    n = len(data)
    lineno = 0
    while pos < n:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl
        chunk = data[pos:end]
        lineno += 1
        if chunk.strip():
            try:
                obj = json.loads(chunk)
                if not isinstance(obj, dict) or "task_id" not in obj:
                    raise ValueError("not a trajectory object")
            except (ValueError, UnicodeDecodeError) as e:
                if nl < 0 or data[nl + 1 :].strip() == b"":
                    return lines, pos  # interrupted last write: cut it off
                raise TrajectoryFileError(
                    f"{path}:{lineno}: damaged trajectory line ({e})"
                ) from None
            if nl < 0:  # complete JSON that only lost its newline
                lines.append(obj)
                return lines, -1
            lines.append(obj)
        pos = end + 1
    return lines, n


def read_trajectories(path: str | Path, dedupe: bool = True) -> list[dict[str, Any]]:
    """Every intact line of a trajectory file (a truncated last line is skipped; first line of
    a key wins). Raises ``FileNotFoundError`` when the file is missing."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"trajectory file {p} does not exist")
    lines, _ = _scan(p.read_bytes(), p)
    if not dedupe:
        return lines
    seen: set[Key] = set()
    out = []
    for line in lines:
        k = line_key(line)
        if k not in seen:
            seen.add(k)
            out.append(line)
    return out


def iter_run_lines(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    yield from read_trajectories(Path(run_dir) / TRAJECTORY_FILE)


class TrajectoryStore:
    """Append-only writer of a run's trajectory file (see the module docstring)."""

    def __init__(self, path: str | Path, fsync_interval_s: float = 1.0):
        self.path = Path(path)
        self.fsync_interval_s = fsync_interval_s
        self._fd: int | None = None
        self._keys: set[Key] = set()
        self._last_sync = time.monotonic()
        self._dirty = False

    def open(self) -> list[dict[str, Any]]:
        """Open for appending after repairing a truncated tail; return the lines already there."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines: list[dict[str, Any]] = []
        if self.path.exists():
            data = self.path.read_bytes()
            lines, good = _scan(data, self.path)
            if good == -1:  # last object complete but its newline was lost
                with self.path.open("ab") as fh:
                    fh.write(b"\n")
            elif good < len(data):
                with self.path.open("r+b") as fh:
                    fh.truncate(good)
        uniq = []
        dups = 0
        for line in lines:
            k = line_key(line)
            if k in self._keys:
                dups += 1
                continue
            self._keys.add(k)
            uniq.append(line)
        if dups:
            warnings.warn(
                f"{self.path}: {dups} duplicate episode line(s) ignored (first one kept)",
                stacklevel=2,
            )
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return uniq

    def __contains__(self, key: Key) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def append(self, line: dict[str, Any]) -> bool:
        """Write one episode line; ``False`` (nothing written) if its key is already stored."""
        if self._fd is None:
            raise RuntimeError("TrajectoryStore.append before open()")
        k = line_key(line)
        if k in self._keys:
            return False
        data = dumps_line(line)
        view = memoryview(data)
        while view:  # os.write may write less than asked (signals, huge lines)
            written = os.write(self._fd, view)
            view = view[written:]
        self._keys.add(k)
        self._dirty = True
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_interval_s:
            os.fsync(self._fd)
            self._last_sync = now
            self._dirty = False
        return True

    def close(self) -> None:
        if self._fd is not None:
            if self._dirty:
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> TrajectoryStore:
        self.open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ErrorLog:
    """Appends failed episodes to ``errors.jsonl`` (one ``os.write`` per line, the file created
    on the first failure only)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._fd: int | None = None

    def append(self, result: dict[str, Any]) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, dumps_line(result))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def check_run_dir(out_dir: Path, identity: dict[str, Any], extra: dict[str, Any] | None) -> None:
    """Write ``run.json``, or check that the one there describes the same run.

    With ``extra=None`` only checks (writes nothing); else records ``extra`` as a new session.
    Raises :class:`~clarisql.rollouts.plan.RunConfigError` for a folder holding another run.
    """
    run_file = out_dir / RUN_FILE
    traj = out_dir / TRAJECTORY_FILE
    if run_file.exists():
        try:
            old = json.loads(run_file.read_text(encoding="utf-8"))
            old_cfg = old["config"]
        except (ValueError, KeyError, OSError) as e:
            raise RunConfigError(f"{run_file} is unreadable ({e}); use another --out") from None
        if old_cfg != identity:
            diff = sorted(
                k for k in set(old_cfg) | set(identity) if old_cfg.get(k) != identity.get(k)
            )
            detail = "; ".join(f"{k}: {old_cfg.get(k)!r} -> {identity.get(k)!r}" for k in diff)
            raise RunConfigError(
                f"{out_dir} holds a run with a different configuration ({detail}); "
                "use another --out or repeat the original command to resume"
            )
        if extra is not None:
            old.setdefault("sessions", []).append(extra)
            write_json_atomic(run_file, old)
        return
    if traj.exists() and traj.stat().st_size > 0:
        raise RunConfigError(
            f"{out_dir} has {TRAJECTORY_FILE} but no {RUN_FILE}; use another --out"
        )
    if extra is None:
        return
    from clarisql import __version__

    write_json_atomic(
        run_file, {"config": identity, "clarisql_version": __version__, "sessions": [extra]}
    )


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)
