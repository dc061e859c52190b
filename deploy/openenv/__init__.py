"""clarisql's OpenEnv environment package (see README.md)."""
