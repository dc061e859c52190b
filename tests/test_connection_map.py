"""ConnectionMap: per-connection state that never keeps a connection alive nor outlives it."""

from __future__ import annotations

import gc
import weakref

import apsw

from clarisql.envs.sandbox.limits import ConnectionMap


def test_values_are_per_connection_and_replaced_in_place() -> None:
    m = ConnectionMap()
    a, b = apsw.Connection(":memory:"), apsw.Connection(":memory:")
    m[a] = 1
    assert m.get(a) == 1 and m.get(b) is None and m.get(b, "none") == "none"
    m[a] = 2
    m[b] = 3
    assert (m.get(a), m.get(b)) == (2, 3)


def test_a_freed_connection_drops_out_and_is_not_kept_alive() -> None:
    m = ConnectionMap()
    conn = apsw.Connection(":memory:")
    ref = weakref.ref(conn)
    m[conn] = "state"
    m[conn] = "state again"  # replacing keeps one entry, with the first weak reference
    conn.close()
    del conn
    gc.collect()
    assert ref() is None
    assert m._d == {}
    fresh = apsw.Connection(":memory:")  # may reuse the freed id: must not see old state
    assert m.get(fresh) is None
