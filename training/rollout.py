"""Token-level multi-turn rollouts for on-policy training (used by PPO).

Why a loop of its own rather than :func:`clarisql.rollouts.episode.run_episode`: PPO needs the exact
token ids the policy sampled, which tokens are the agent's and which the environment's, and it
needs generation batched across episodes. ``run_episode`` works at the action level, one episode
at a time. This loop is thin: every episode is a :class:`ClarifySQLEnv` (reset/step — all episode
logic, rewards and termination stay in the env); the loop only turns the chat into tokens.

Tokens are built the way TRL's GRPO tool loop builds them, so PPO and GRPO train on the same
token streams: the prompt is the rendered chat (:class:`ChatFormat`, tools included) with the
generation prompt; after each agent turn come the generated ids (ending with the end-of-turn
token) and then the *suffix* ids of the env's reply (tool/user message and the next generation
prompt), computed by rendering a dummy conversation with and without the reply — no re-rendering
of what the agent wrote. ``action_mask`` is 1 exactly on generated tokens.

Each agent turn's text goes to ``env.step`` as is; a turn without a usable action is the env's
invalid action (with its penalty), as in evaluation with ``hf:``. An episode that would outgrow
``max_episode_tokens`` is closed with the env's ``stop`` action (no SQL) and marked
``ended_by="length"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.env import ClarifySQLEnv
from clarisql.policies.hf import ChatFormat, HFPolicy


@dataclass
class TokenEpisode:
    """One finished episode as tokens.

    - ``input_ids``: prompt, agent turns and env replies, concatenated.
    - ``action_mask``: 1 on tokens the agent generated.
    - ``token_rewards``: the env's step reward on the last token of the agent turn it followed.
    - ``summary``: the env's ``info["episode"]`` (record, reward, components, correct).
    """

    task_id: str
    input_ids: list[int]
    action_mask: list[int]
    token_rewards: list[float]
    prompt_len: int
    reward: float = 0.0
    correct: bool = False
    turns: int = 0
    ended_by: str = "env"
    summary: dict[str, Any] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)


class ChatTokens:
    """Prompt and reply-suffix token ids for a tokenizer and a :class:`ChatFormat`."""

    def __init__(self, tokenizer: Any, fmt: ChatFormat):
        self.tokenizer = tokenizer
        self.fmt = fmt
        self.render_kwargs = fmt.render_kwargs()
        self.eos_id = tokenizer.eos_token_id

    def prompt_ids(self, conv: Sequence[Mapping[str, Any]]) -> list[int]:
        return list(
            self.tokenizer.apply_chat_template(
                list(conv),
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
                **self.render_kwargs,
            )
        )

    def suffix_ids(
        self, assistant: Mapping[str, Any], replies: Sequence[Mapping[str, Any]]
    ) -> list[int]:
        """Ids that follow an assistant turn (ending in end-of-turn) for ``replies``, generation prompt included."""
        if assistant.get("tool_calls"):
            name = assistant["tool_calls"][0]["function"]["name"]
            dummy_asst = {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": {}}}],
            }
        else:
            dummy_asst = {"role": "assistant", "content": "dummy"}
        dummy = [{"role": "user", "content": "dummy"}, dummy_asst]
        kw = dict(self.fmt.chat_template_kwargs)
        prefix = list(
            self.tokenizer.apply_chat_template(
                dummy, add_generation_prompt=False, tokenize=True, return_dict=False, **kw
            )
        )
        full = list(
            self.tokenizer.apply_chat_template(
                dummy + list(replies),
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
                **kw,
            )
        )
        # Templates write "<eos>\n" after a turn; the generated turn ends at <eos>, so align there.
        eos_pos = [i for i, t in enumerate(prefix) if t == self.eos_id]
        if eos_pos:
            prefix = prefix[: eos_pos[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise ValueError(
                "the chat template is not prefix-preserving: cannot build multi-turn token sequences"
            )
        return full[len(prefix) :]


def _replies(conv: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The last assistant message of ``conv`` and the messages after it."""
    for i in range(len(conv) - 1, -1, -1):
        if conv[i]["role"] == "assistant":
            return conv[i], conv[i + 1 :]
    raise ValueError("no assistant message in the conversation")


def collect_episodes(
    policy: HFPolicy,
    envs: Sequence[ClarifySQLEnv],
    task_ids: Sequence[str],
    *,
    seeds: Sequence[int | None] | None = None,
    max_episode_tokens: int = 4096,
    on_turn: Callable[[int, str], None] | None = None,
) -> list[TokenEpisode]:
    """Play one episode per env (``task_ids[i]`` in ``envs[i]``) with ``policy``'s model, batched.

    ``policy`` supplies the model, tokenizer, chat format and sampling settings
    (:meth:`HFPolicy.generate`). Returns the episodes in input order.
    """
    if len(envs) != len(task_ids):
        raise ValueError("collect_episodes: one env per task id")
    ct = ChatTokens(policy.tokenizer, policy.format)
    n = len(envs)
    seeds = list(seeds) if seeds is not None else [None] * n
    eps: list[TokenEpisode] = []
    for env, tid, seed in zip(envs, task_ids, seeds):
        env.reset(seed=seed, options={"task_id": tid})
        ids = ct.prompt_ids(policy.format.conversation(env.messages))
        eps.append(TokenEpisode(tid, ids, [0] * len(ids), [0.0] * len(ids), len(ids)))
    active = list(range(n))
    while active:
        runnable, closing = [], []
        for i in active:
            (
                runnable
                if len(eps[i].input_ids) + policy.max_new_tokens <= max_episode_tokens
                else closing
            ).append(i)
        for i in closing:  # the episode would outgrow its token budget: end it with the env's stop
            _, reward, term, trunc, info = envs[i].step({"type": "stop", "sql": None})
            ep = eps[i]
            last = max(
                (k for k, m in enumerate(ep.action_mask) if m), default=len(ep.input_ids) - 1
            )
            ep.token_rewards[last] += float(reward)
            ep.reward += float(reward)
            ep.ended_by = "length"
            _close(ep, info)
        if not runnable:
            break
        outs: list[list[int]] = []
        for start in range(0, len(runnable), policy.batch_size):
            chunk = runnable[start : start + policy.batch_size]
            outs += policy.generate([eps[i].input_ids for i in chunk])
        still = []
        for i, new in zip(runnable, outs):
            ep, env = eps[i], envs[i]
            if not new or new[-1] not in policy.eos_ids:
                new = [
                    *new,
                    ct.eos_id,
                ]  # cut at max_new_tokens: close the turn (this token is not the agent's)
                gen_mask = [1] * (len(new) - 1) + [0]
            else:
                gen_mask = [1] * len(new)
            text = policy.tokenizer.decode(new, skip_special_tokens=True).strip()
            ep.texts.append(text)
            if on_turn is not None:
                on_turn(i, text)
            ep.input_ids += new
            ep.action_mask += gen_mask
            ep.token_rewards += [0.0] * len(new)
            _, reward, term, trunc, info = env.step(text)
            ep.turns += 1
            last = (
                max(k for k, m in enumerate(ep.action_mask) if m)
                if any(gen_mask)
                else len(ep.input_ids) - 1
            )
            ep.token_rewards[last] += float(reward)
            ep.reward += float(reward)
            if term or trunc:
                _close(ep, info)
                continue
            asst, replies = _replies(policy.format.conversation(env.messages))
            suffix = ct.suffix_ids(asst, replies)
            ep.input_ids += suffix
            ep.action_mask += [0] * len(suffix)
            ep.token_rewards += [0.0] * len(suffix)
            still.append(i)
        active = still  # every active episode was either closed or ran this round
    return eps


def _close(ep: TokenEpisode, info: Mapping[str, Any]) -> None:
    summary = dict(info.get("episode") or {})
    ep.summary = summary
    ep.correct = bool(summary.get("correct"))


__all__ = ["ChatTokens", "TokenEpisode", "collect_episodes"]
