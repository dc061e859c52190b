"""clarisql episodes inside other RL frameworks: verifiers, SkyRL-gym and verl.

Contract
- Every adapter plays the same :class:`~clarisql.envs.env.ClarifySQLEnv` episode through
  :class:`~clarisql.envs.adapters.episode.TextEpisode`: the model's reply is the action
  (canonical tool-call text, ``<tool_call>{"name": "execute_sql", "arguments": {...}}</tool_call>``,
  or a structured ``tool_calls`` item), the environment's answer is the next message, and the
  episode ends on ``abstain``/``stop``, the user's ``###STOP###`` or ``max_turns``. Nothing the
  agent sees differs from the in-process env: the system prompt (action format and schema) and
  the opening user message are the env's own, and a bad reply is an invalid action the episode
  survives, never an exception.
- Rewards are the env's reward spec (``reward=``: preset name, YAML path or mapping): each
  step's reward is the env's step reward, so their sum is the episode reward; the episode's
  weighted components (outcome, reliability, ...) are reported by name where the framework
  keeps named scores (verifiers' rubric rewards, SkyRL metadata/metrics, verl's metrics).
- Tasks are picked by id; ``split="train"|"test"`` keeps the stable-hash split of
  :mod:`clarisql.envs.splits` (the same split as the datasets export).
- ``verifiers_env``: ``load_environment(suite=..., gate=..., reward=...)`` builds a
  ``verifiers.v1`` environment (a taskset of clarisql tasks whose env steps the episode as the
  run's user, rubric = the reward spec); the module is also a verifiers taskset plugin
  (``--env.taskset.id clarisql-vf``: the top-level module ``clarisql_vf``, installed from
  ``envs/adapters/plugins/``).
- ``skyrl_env``: :class:`~clarisql.envs.adapters.skyrl_env.ClarisqlSkyRLEnv`, a SkyRL-gym
  ``BaseTextEnv`` (``init(prompt)``, ``step(action)``), registered as ``"clarisql"`` by
  :func:`~clarisql.envs.adapters.skyrl_env.register`.
- ``verl_interaction``: :class:`~clarisql.envs.adapters.verl_interaction.ClarisqlInteraction`,
  a verl multi-turn interaction (``start_interaction``/``generate_response``/
  ``calculate_score``/``finalize_interaction``) for verl's SGLang multi-turn rollout; the
  recipe is ``configs/verl/``.

Each framework is an optional dependency (the ``verifiers``, ``skyrl`` extras; verl is not
installable from this project's extras), imported only by its own module. Depends on
``clarisql.envs`` and ``clarisql.rewards`` only.
"""
