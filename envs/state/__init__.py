"""Database state: canonical final-state digests (absolute and deferred), the on-disk digest cache,
state diffs and gold answers / gold final states.

Contract: pure functions of a database image and what an episode changed; depends on the sandbox only.
"""
