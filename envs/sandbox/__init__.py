"""The sandbox: per-episode SQLite sessions, what it knows of a statement, resource limits,
copy-on-write files, database images and the frozen clock.

Contract: everything an agent's SQL touches goes through :class:`~clarisql.envs.sandbox.database.Session`;
this package imports nothing from the episode, the simulators or the suites.
"""
