"""OpenAI-compatible chat endpoints: one HTTP client shared by the LLM-played user, the ``openai:``
policy and the SUQL backends.

Contract: every call is bounded (deadline, reply size) and raises :class:`~clarisql.envs.endpoints.chat_http.ChatError`-style
errors with one clear line; no retries are hidden from the caller's deadline.
"""
