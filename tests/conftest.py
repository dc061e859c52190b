"""Shared fixtures: small real SQLite databases and the ../shared data folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import sqlite_utils

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CHINOOK = (
    SHARED_DATA
    / "dysql"
    / "DySQL-Bench"
    / "dysql_bench"
    / "envs"
    / "chinook"
    / "data"
    / "chinook.sqlite"
)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def need_shared(path: Path = SHARED_DATA) -> Path:
    if not path.exists():
        pytest.skip(
            f"{path} is absent: the ../shared data folder sits beside the checkout here and in CI, not in a fresh clone elsewhere"
        )
    return path


@pytest.fixture
def chinook() -> Path:
    return need_shared(CHINOOK)


def build_small_db(path: Path) -> Path:
    db = sqlite_utils.Database(path)
    db["cities"].insert_all(
        [{"id": 1, "name": "Riverton"}, {"id": 2, "name": "Northport"}], pk="id"
    )
    db["sales"].insert_all(
        [
            {
                "id": i,
                "city_id": 1 + i % 2,
                "year": 2019 + i % 3,
                "price": 100.0 + i,
                "project": f"Project {i}",
            }
            for i in range(1, 31)
        ],
        pk="id",
        foreign_keys=[("city_id", "cities", "id")],
    )
    db["log"].insert_all(
        [{"msg": "a", "last_update": "2020-01-01"}, {"msg": "b", "last_update": "2020-01-02"}]
    )
    # keys the digest's change tracking must handle: a nullable TEXT key, a WITHOUT ROWID table
    db.execute("CREATE TABLE tags (tag TEXT PRIMARY KEY, n INTEGER)")
    db.execute("INSERT INTO tags VALUES ('a', 1), ('b', 2), (NULL, 3)")
    db.execute("CREATE TABLE kv (k TEXT, part INTEGER, v, PRIMARY KEY (k, part)) WITHOUT ROWID")
    db.execute("INSERT INTO kv VALUES ('x', 1, 1.5), ('x', 2, 'two'), ('y', 1, NULL)")
    db.conn.commit()
    db.close()
    return path


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    return build_small_db(tmp_path / "small.sqlite")
