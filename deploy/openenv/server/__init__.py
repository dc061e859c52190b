"""The OpenEnv server of clarisql's environment package."""
