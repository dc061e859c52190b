"""Column roles come from names and values together, and only measures are aggregated."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from clarisql.envs.synth.column_roles import column_role
from clarisql.envs.synth.discover import discover
from clarisql.envs.synth.ingest import ingest
from clarisql.envs.synth.profile import profile_lake
from clarisql.envs.synth.templates import roles


def write_flights(folder: Path, rows: int = 400) -> Path:
    rng = random.Random(3)
    folder.mkdir(parents=True, exist_ok=True)
    header = [
        "flight_no", "carrier", "origin", "lat", "lon", "latency", "dep_time", "sched_hour",
        "day", "month", "year", "zip", "stint", "active", "distance", "delay_minutes",
        "temp_min", "points_max",
    ]  # fmt: skip
    with (folder / "flights.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for i in range(rows):
            w.writerow([
                f"F{i:05d}", rng.choice(["AA", "BA", "CX", "DL", "EK"]),
                rng.choice(["LAX", "JFK", "ORD", "SFO", "SEA", "BOS", "ATL"]),
                round(rng.uniform(25, 49), 5), round(rng.uniform(-124, -67), 5),
                rng.randint(100, 90000), f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
                rng.randint(0, 23), rng.randint(1, 28), rng.randint(1, 12),
                rng.randint(2015, 2022), rng.randint(10000, 99999), rng.randint(1, 4),
                rng.choice("YN"), rng.randint(100, 5000), rng.randint(0, 300),
                rng.randint(-30, 20), rng.randint(0, 7),
            ])  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("roles")
    return discover(profile_lake(ingest([write_flights(tmp / "csv")], tmp / "lake")))


def test_roles_from_names_and_values(lake) -> None:
    t = lake.table("flights")
    got = {c.name: column_role(c) for c in t.columns}
    assert got["flight_no"] in ("identifier", "code")
    assert got["lat"] == got["lon"] == "coordinate"
    assert got["latency"] == "measure"  # 'lat' is not a word of it
    assert got["dep_time"] == got["sched_hour"] == "time"
    assert got["day"] == got["month"] == got["year"] == "date"
    assert got["zip"] == "code" and got["stint"] == "ordinal" and got["active"] == "flag"
    assert got["distance"] == got["delay_minutes"] == got["temp_min"] == "measure"
    assert got["origin"] in ("code", "category")


def test_only_measures_are_aggregated_and_never_grouped(lake) -> None:
    r = roles(lake.table("flights"), lake)
    measures = {c.name for c in r.measures}
    assert measures <= {"latency", "distance", "delay_minutes", "temp_min", "points_max"}
    assert {"lat", "lon", "day", "sched_hour", "zip", "stint"}.isdisjoint(measures)
    assert measures.isdisjoint({c.name for c in r.dims})
