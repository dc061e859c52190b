"""``ClarifySQLEnv``: one task is one episode of clarifying, querying, abstaining and stopping.

Spaces
- Action: :class:`~clarisql.envs.spaces.ActionSpace`, a structured dict
  (``clarify``/``execute``/``abstain``/``stop``, see :mod:`clarisql.envs.actions`) or the same
  action as canonical tool-call text.
- Observation: ``Dict(schema=Text, dialogue=Text, last=Text, turn=Discrete(max_turns + 1))``:
  the database schema summary, the whole dialogue so far, what the last action produced, and
  the number of actions taken.

Episode
- ``reset(seed=None, options=None)`` picks a task (``options={"task_id": ...}`` or
  ``{"task_index": i}``, else a seeded uniform draw), opens a private database session
  (read-only tasks borrow a read-only handle; write tasks get a private in-memory copy) and
  returns the opening observation; ``info`` carries ``task_id``, ``writable`` and ``messages``
  (the chat so far, system prompt included), never the task's category (it would name the
  hidden answer: unanswerable, or which clause is unclear).
- ``clarify`` asks the user simulator (gated: it reveals values only for matching labels);
  ``execute`` runs one SQL statement in the sandbox; ``abstain`` ends the episode declaring the
  request unanswerable; ``stop`` ends it, the answer being the result of its ``sql`` (or of the
  last successful query). The user simulator may end the dialogue (``###STOP###``).
- ``terminated``: abstain, stop or user stop. ``truncated``: ``max_turns`` actions taken.

Rewards
Every step's reward is the weighted sum of the reward spec's components that fired (see
:mod:`clarisql.rewards.spec`); episode-level components (outcome, reliability, ...) are added on
the last step. ``info["reward_components"]`` holds this step's weighted components and
``info["error"]`` the last action's error message or ``None``; ``info["sql_time_s"]`` is the
time SQLite spent on the step's statement. The last step's
``info["episode"]`` holds the episode record, total reward and component totals, and
``hallucinated_messages``/``hallucination_rate`` (clarify messages that stated query results no
statement returned, see :mod:`clarisql.envs.hallucination`). ``info["simulator"]`` (reset and
clarify steps, when the user simulator reports it) says which backend answered and whether it
fell back. The simulator sees the task and a copy of the dialogue only
(:class:`~clarisql.envs.simulators.DialogueContext`): never the session or the hidden state, so
no reply, ``###STOP###`` included, depends on whether the database reached the gold state.

Errors
``step`` never raises for bad input: malformed actions, refused or failing SQL, stepping after
the end or before ``reset`` all come back as an observation that says what was wrong.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping
from typing import Any

import apsw
import gymnasium as gym

from clarisql.envs.actions import (
    ACTION_FORMAT_HELP,
    MAX_QUESTION_CHARS,
    Action,
    ActionError,
    NoActionFound,
    parse_action,
    safe_repr,
)
from clarisql.envs.env_tools import extra_help, resolve_table_search, search_tables
from clarisql.envs.hallucination import hallucinated_results, hallucination_rate
from clarisql.envs.retrieval import compact_schema
from clarisql.envs.sandbox.database import (
    DatabaseImage,
    ExecResult,
    Session,
    SessionLimits,
    get_image,
)
from clarisql.envs.schema import schema_summary
from clarisql.envs.simulators import (
    DialogueContext,
    UserSimulator,
    make_simulator,
    resolve_simulator,
)
from clarisql.envs.spaces import ActionSpace, TextSpace
from clarisql.envs.state import gold
from clarisql.envs.state.deferred import StateDigest, session_state
from clarisql.envs.state.diff import state_diff
from clarisql.envs.suites import Suite, load_suite
from clarisql.envs.tasks import Task
from clarisql.rewards import EpisodeRecord, RewardSpec, TurnRecord, is_correct, load_reward_spec
from clarisql.rewards.spec import episode_components, score_episode, step_components

SYSTEM_PROMPT = """\
You are a data assistant working on an SQLite database. The user's request may be \
underspecified (unclear intent, a missing or wrong city/district/year, a name that does not exist \
as written) or impossible to answer from the database. Ask the user when something is unclear, \
abstain when the request cannot be answered with SQL over this database, otherwise run SQL and \
stop with the final query.

{actions}

{schema}"""


class _Outcome:
    """What one action did: the text shown, its error, its turn record, SQL time, the end."""

    __slots__ = ("last", "error", "turn", "sql_time", "terminated", "sim_info")

    def __init__(
        self,
        last: str,
        error: str | None,
        turn: TurnRecord | None = None,
        sql_time: float = 0.0,
        sim_info: dict[str, Any] | None = None,
    ) -> None:
        self.last, self.error, self.sql_time = last, error, sql_time
        self.turn = turn if turn is not None else TurnRecord(kind="invalid", valid=False)
        self.terminated = False
        self.sim_info = sim_info


class ClarifySQLEnv(gym.Env[dict, Any]):
    """Gymnasium environment for clarification-aware text-to-SQL (see the module docstring).

    Args:
        suite: a suite name (``"builtin"``, ``"dysql"``), a JSONL task file, or a :class:`Suite`.
        suite_kwargs: keyword arguments for the suite loader (e.g. ``{"seed": 0}``).
        simulator: user simulator name or instance; ``None`` takes the suite's
            ``metadata["simulator"]``, else ``"fixed"``. Any mode keeps the suite's language
            (its templates), see :func:`clarisql.envs.simulators.resolve_simulator`.
        reward: reward spec: preset name, YAML path, mapping or :class:`RewardSpec`.
        max_turns: actions per episode before truncation (``None``: the suite's
            ``metadata["max_turns"]``, else 20).
        max_clarifications: clarify actions allowed per episode (more are invalid actions;
            ``None``: the suite's ``metadata["max_clarifications"]``, else 5).
        limits: per-statement sandbox limits.
        max_rows_shown: rows of a result shown in the observation.
        task_ids: restrict sampling to these task ids.
        gate: how clarifications are gated: ``"labels"`` (the agent's labels), ``"text"`` (the
            free-text question, mapped to labels, see :mod:`clarisql.envs.simulators.gate`) or
            ``"both"``; ``None``: the suite's ``metadata["gate"]``, else the simulator's own.
        gate_mapper: the question mapper of text gating: ``"offline"`` (default),
            ``"lexical"``, ``"llm:MODEL@URL"`` or a mapper instance.
        table_search: show a compact schema (table names only) and offer ``search_tables``
            (:mod:`clarisql.envs.retrieval`); ``None``: on when a database of the suite has more
            than 50 tables (and bm25s is installed).
        plain_text: what a text action with no tool call in it means: ``"invalid"`` (an invalid
            action) or ``"message"`` (a message to the user, i.e. a clarify action without
            labels, as DySQL-Bench agents talk to the user in plain text); ``None``: the
            suite's ``metadata["plain_text"]``, else ``"invalid"``.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        suite: str | Suite = "builtin",
        *,
        suite_kwargs: Mapping[str, Any] | None = None,
        simulator: str | UserSimulator | None = None,
        simulator_kwargs: Mapping[str, Any] | None = None,
        reward: str | Mapping[str, Any] | RewardSpec | None = None,
        max_turns: int | None = None,
        max_clarifications: int | None = None,
        limits: SessionLimits | None = None,
        max_rows_shown: int = 20,
        task_ids: list[str] | None = None,
        render_mode: str | None = None,
        plain_text: str | None = None,
        gate: str | None = None,
        gate_mapper: Any = None,
        table_search: bool | None = None,
    ):
        self.suite = load_suite(suite, **dict(suite_kwargs or {}))
        # None: the suite's default (DySQL: 30 agent turns), else 20 turns / 5 clarifications.
        if max_turns is None:
            max_turns = int(self.suite.metadata.get("max_turns", 20))
        if max_clarifications is None:
            max_clarifications = int(self.suite.metadata.get("max_clarifications", 5))
        if max_turns < 1:
            raise ValueError("max_turns must be >= 1")
        self.plain_text = plain_text or self.suite.metadata.get("plain_text", "invalid")
        if self.plain_text not in ("invalid", "message"):
            raise ValueError(f"plain_text must be 'invalid' or 'message', got {self.plain_text!r}")
        if task_ids is not None:
            self.suite = self.suite.subset(list(task_ids))
        if not self.suite.tasks:
            raise ValueError(f"suite {self.suite.name!r} has no tasks")
        # None: the suite's choice (DySQL: instruction-following), else Fixed mode; any mode keeps
        # the suite's language (templates) unless simulator_kwargs override it
        simulator, sim_kw = resolve_simulator(simulator, simulator_kwargs, self.suite.metadata)
        self.simulator = make_simulator(simulator, **sim_kw)
        self.gate = gate or self.suite.metadata.get("gate")
        if self.gate is None and gate_mapper is not None:
            self.gate = "text"
        if self.gate is not None:
            if hasattr(self.simulator, "set_gate"):
                self.simulator.set_gate(self.gate, gate_mapper)
            elif self.gate != "labels":
                raise ValueError(
                    f"gate={self.gate!r}: the {self.simulator.name!r} simulator has no label gate"
                )
        self.reward_spec = load_reward_spec(reward)
        self.max_turns = int(max_turns)
        self.max_clarifications = int(max_clarifications)
        self.limits = limits or SessionLimits()
        self.max_rows_shown = int(max_rows_shown)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.action_space = ActionSpace()
        self.observation_space = gym.spaces.Dict(
            {
                "schema": TextSpace(),
                "dialogue": TextSpace(10_000_000),
                "last": TextSpace(),
                "turn": gym.spaces.Discrete(self.max_turns + 1),
            }
        )
        self._images: dict[str, DatabaseImage] = {}
        self.table_search = resolve_table_search(table_search, self.suite, self.image_for)
        self._session: Session | None = None
        self.task: Task | None = None
        self.record: EpisodeRecord | None = None
        self.messages: list[dict[str, str]] = []
        self._done = True

    # --- helpers ----------------------------------------------------------------------------
    def image_for(self, task: Task) -> DatabaseImage:
        img = self._images.get(task.db)
        if img is None:
            spec = self.suite.database(task)
            img = self._images[task.db] = get_image(spec.path, spec.post_copy_sql)
        return img

    def _obs(self, last: str) -> dict[str, Any]:
        return {
            "schema": self._schema,
            "dialogue": self._dialogue,
            "last": last,
            "turn": self._turn,
        }

    def _say(self, role: str, who: str, text: str) -> None:
        self.messages.append({"role": role, "content": text})
        self._dialogue += f"{who}: {text}\n"

    # --- Gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self._session is not None:
            self._session.close()
            self._session = None
        options = options or {}
        if "task_id" in options:
            task = self.suite.task(options["task_id"])
        elif "task_index" in options:
            task = self.suite.tasks[int(options["task_index"]) % len(self.suite.tasks)]
        else:
            task = self.suite.tasks[int(self.np_random.integers(len(self.suite.tasks)))]
        self.task = task
        image = self.image_for(task)
        spec = self.suite.database(task)
        self._digest_config = spec.digest
        self._session = image.session(task.writable, self.limits)
        self._full_schema = schema_summary(image, spec.description)
        self._schema = (
            compact_schema(image, spec.description) if self.table_search else self._full_schema
        )
        self._turn = 0
        self._clarifications = 0
        self._answer: tuple[list[list[Any]], bool] | None = None
        self._done = False
        self._revealed: list[str] = []
        self._returned: list[str] = []  # statement results shown to the agent (hallucination check)
        sim_seed = int(self.np_random.integers(2**31 - 1))
        opening = self.simulator.reset(task, seed=sim_seed)
        self.record = EpisodeRecord(
            task_id=task.id,
            category=task.category,
            answerable=task.answerable,
            writable=task.writable,
            unanswerable_kind=task.unanswerable_kind,
        )
        self._found: set[Any] = set()  # gold labels asked for so far (label recall)
        if self._gated():
            self.record.labels_gold = len({_unit(u.label) for u in task.underspecs})
            self.record.labels_found = 0
        self._dialogue = ""
        self.messages = [
            {
                "role": "system",
                "content": SYSTEM_PROMPT.format(
                    actions=ACTION_FORMAT_HELP + extra_help(self.table_search, self.gate),
                    schema=self._schema,
                ),
            }
        ]
        for turn in task.context:  # earlier dialogue turns (CoSQL), before the opening request
            self._say(turn["role"], "User" if turn["role"] == "user" else "Agent", turn["content"])
        self._say("user", "User", opening)
        # No "category": it names the hidden answer ("unanswerable:...", the clause that is
        # unclear). ``writable`` is public: whether the agent's writes are allowed at all.
        info = {
            "task_id": task.id,
            "writable": task.writable,
            "messages": self.messages,
            "reward_components": {},
            "error": None,
        }
        sim_info = getattr(self.simulator, "reset_info", None)
        self._sim_fallback: str | None = None
        if sim_info:
            info["simulator"] = dict(sim_info)
            if sim_info.get("fallback"):
                self._sim_fallback = str(sim_info.get("fallback_reason") or "fallback")
        return self._obs(opening), info

    def step(self, action: Any):
        if self._done or self._session is None or self.record is None:
            msg = "the episode is over: call reset() to start a new one"
            obs = (
                self._obs(msg)
                if self.task is not None
                else {"schema": "", "dialogue": "", "last": msg, "turn": 0}
            )
            return obs, 0.0, True, False, {"reward_components": {}, "error": msg}
        return self._guarded_step(action, None)

    def step_inline(self, action: Any, slice_s: float):
        """``step(action)`` if it finishes within ``slice_s`` seconds of SQL, else ``None``.

        For a caller that may not block for long (an event loop serving many sessions): the
        step is taken here only when it calls no model and scores nothing (an ``execute`` of
        one read statement, or an invalid action, on a turn that cannot end the episode; a
        step after the end). Its statement runs under a time slice (see
        :meth:`Session.execute_inline`); when the slice runs out, or the step is of another
        kind, ``None`` comes back with nothing changed: the episode, the dialogue and the
        database are as before, and the caller takes the step with :meth:`step` (elsewhere, on
        a thread). A step taken here returns exactly what :meth:`step` would.
        """
        if self._done or self._session is None or self.record is None:
            return self.step(action)
        if self._turn + 1 >= self.max_turns:  # the step ends the episode: scoring runs SQL
            return None
        try:
            act = parse_action(action)
        except (NoActionFound, ActionError):
            if self.plain_text == "message" and isinstance(action, str):
                return None  # (it may become a clarification: the simulator may call a model)
            return self.step(action)  # an invalid action: no SQL, no model
        except Exception:  # (step() reports what went wrong)
            return None
        if act.type != "execute":
            return None
        try:
            res = self._session.execute_inline(act.sql, slice_s)
        except Exception:  # (nothing was written: only reads run inline; step() reports it)
            return None
        if res is None:
            return None
        return self._guarded_step(action, (act, res))

    def _guarded_step(self, action: Any, done: tuple[Action, ExecResult] | None):
        try:
            return self._step(action, done)
        except Exception as e:  # last resort: step() must never raise (see module docstring)
            msg = f"internal error while handling the action: {type(e).__name__}: {e}"
            self._done = True
            info = {"reward_components": {}, "error": msg, "traceback": traceback.format_exc()}
            return self._obs(msg), 0.0, True, False, info

    def _step(self, raw: Any, done: tuple[Action, ExecResult] | None = None):
        """One step; ``done``: the action already parsed and its statement already run
        (:meth:`step_inline`)."""
        assert self.task is not None and self.record is not None and self._session is not None
        self._turn += 1
        act, error = self._take_action(raw, done)
        if act is None:
            out = _Outcome(error or "", error)
            self.messages.append({"role": "user", "content": out.last})
        elif act.type == "clarify":
            out = self._clarify(act)
        elif act.type == "execute":
            out = self._execute(act, done[1] if done is not None else None)
        elif act.type == "search_tables":
            last, error = search_tables(self, act.query, act.k)
            out = _Outcome(last, error, TurnRecord(kind="search_tables"))
            self._dialogue += f"Result: {last}\n"
            self.messages.append({"role": "tool", "content": last})
        elif act.type == "abstain":
            self.record.end = "abstain"
            out = _Outcome("You abstained. The episode is over.", None, TurnRecord(kind="abstain"))
            out.terminated = True
        else:
            out = self._stop(act)
        return self._end_step(act, out)

    def _take_action(
        self, raw: Any, done: tuple[Action, ExecResult] | None
    ) -> tuple[Action | None, str | None]:
        """The step's action (``None`` if invalid, with the error) and its dialogue entry."""
        act, error = None, None
        try:
            act = done[0] if done is not None else parse_action(raw)
        except NoActionFound as e:
            error = f"invalid action: {e}"
            if self.plain_text == "message" and isinstance(raw, str):
                if len(raw.strip()) > MAX_QUESTION_CHARS:
                    error += (
                        f" (as a message to the user it is longer than "
                        f"{MAX_QUESTION_CHARS} characters)"
                    )
                else:
                    act, error = Action("clarify", question=raw.strip()), None
        except ActionError as e:
            error = f"invalid action: {e}"
        if act is not None:
            content = raw if isinstance(raw, str) else act.to_text()
            self._dialogue += f"Agent: {_describe(act)}\n"
        else:
            content = raw if isinstance(raw, str) else safe_repr(raw, 2000)
            self._dialogue += f"Agent: (invalid action) {error}\n"
        self.messages.append({"role": "assistant", "content": content})
        return act, error

    def _clarify(self, act: Action) -> _Outcome:
        assert self.task is not None and self.record is not None
        if self._clarifications >= self.max_clarifications:
            error = (
                f"invalid action: the clarification limit ({self.max_clarifications}) is reached"
            )
            self._dialogue += f"Environment: {error}\n"
            self.messages.append({"role": "user", "content": error})
            return _Outcome(error, error)
        self._clarifications += 1
        ctx = DialogueContext(
            self.task, [dict(m) for m in self.messages], self._turn, schema=self._full_schema
        )
        reply = self.simulator.respond(act.question, act.labels, ctx)
        sim_info = dict(reply.info or {})
        if sim_info.get("fallback") and not self._sim_fallback:
            self._sim_fallback = str(sim_info.get("fallback_reason") or "fallback")
        turn = TurnRecord(
            kind="clarify",
            earned=reply.earned,
            n_labels=len(act.labels),
            n_revealed=len(reply.revealed),
            hallucinated=hallucinated_results(act.question, self._returned),
        )
        if self._gated():
            self._count_asked(turn, act, reply.revealed, sim_info)
        self._revealed.extend(u.value for u in reply.revealed)
        self._say("user", "User", reply.text)
        out = _Outcome(reply.text, None, turn, sim_info=sim_info)
        if reply.stop:
            out.terminated = True
            self.record.end = "user_stop"
        return out

    def _gated(self) -> bool:
        """A user that reveals per label (ODUTQA-style), not DySQL's instruction-following one,
        whose messages are the protocol itself (nothing to count as asked)."""
        return getattr(self.simulator, "name", "") != "instruction"

    def _count_asked(
        self, turn: TurnRecord, act: Action, revealed: list[Any], sim_info: dict[str, Any]
    ) -> None:
        """Label precision and recall facts of one clarify turn (see :class:`TurnRecord`):
        the distinct labels asked (a free-text turn: the aspects the gate mapped it to, or what
        it revealed if more), at least one thing per turn; those that are gold labels. A turn
        the gate refused as too broad found nothing: everything it asked is unneeded."""
        assert self.task is not None and self.record is not None
        gold = {_unit(u.label) for u in self.task.underspecs}
        asked = {_unit(lb) for lb in act.labels}
        refused = bool(sim_info.get("broad")) or str(sim_info.get("vague", "")).startswith(
            "too broad"
        )
        hit = set() if refused else (asked & gold)
        hit |= {_unit(u.label) for u in revealed}
        units = len(asked)
        if not act.labels:
            aspects = sim_info.get("aspects") or []
            units = len(aspects) if isinstance(aspects, (list, tuple, set)) else 0
        turn.n_asked = max(1, units, len(hit))
        turn.n_needed = len(hit)
        self._found |= hit
        self.record.labels_found = len(self._found)

    def _execute(self, act: Action, res: ExecResult | None) -> _Outcome:
        """An ``execute`` action (``res``: its statement already run, by :meth:`step_inline`)."""
        assert self._session is not None
        if res is None:
            res = self._session.execute(act.sql)
        if res.ok and res.columns:
            self._answer = ([list(r) for r in res.rows], res.truncated)
        last = self._format(res)
        self._returned.append(last)
        self._dialogue += f"Result: {last}\n"
        self.messages.append({"role": "tool", "content": last})
        turn = TurnRecord(kind="execute", sql_error=not res.ok)
        return _Outcome(last, None if res.ok else res.error, turn, res.sqlite_s)

    def _stop(self, act: Action) -> _Outcome:
        assert self._session is not None and self.record is not None
        out = _Outcome("You stopped. The episode is over.", None, TurnRecord(kind="stop"))
        if act.sql is not None:
            res = self._session.execute(act.sql)
            out.sql_time = res.sqlite_s
            out.turn.sql_error = not res.ok
            if res.ok:
                self._answer = ([list(r) for r in res.rows], res.truncated)
            else:
                out.error = res.error
                self._answer = None
            out.last = self._format(res) + "\n" + out.last
        out.terminated = True
        self.record.end = "stop"
        return out

    def _end_step(self, act: Action | None, out: _Outcome):
        """Record the turn, score it (and the episode when it ends), build the step's tuple."""
        assert self.task is not None and self.record is not None
        self.record.turns.append(out.turn)
        components = step_components(out.turn, self.reward_spec)
        terminated = out.terminated
        truncated = not terminated and self._turn >= self.max_turns
        info: dict[str, Any] = {
            "error": out.error,
            "task_id": self.task.id,
            "turn": self._turn,
            "action": None if act is None else act.to_dict(),
            "sql_time_s": out.sql_time,
        }
        if out.sim_info:
            info["simulator"] = out.sim_info
        if terminated or truncated:
            if truncated:
                self.record.end = "truncated"
            info["episode"] = self._finish()
            if info["error"] is None and info["episode"].get("digest_error"):
                info["error"] = info["episode"]["digest_error"]
            components = {**components}
            for k, v in episode_components(self.record, self.reward_spec).items():
                components[k] = components.get(k, 0.0) + v
        info["reward_components"] = components
        reward = float(sum(components.values()))
        if self.render_mode == "human":
            self.render()
        return self._obs(out.last), reward, terminated, truncated, info

    def _finish(self) -> dict[str, Any]:
        """Close the episode: final digest, gold facts, totals."""
        assert self.task is not None and self.record is not None and self._session is not None
        self._done = True
        rec, task = self.record, self.task
        image = self.image_for(task)
        gold_error = None
        digest_error = None
        final_state = None
        if self._answer is not None:
            rec.answer_rows, rec.answer_truncated = self._answer
        try:
            if task.writable:
                final_state, rec.final_digest = self._bounded_final_digest(task.gold_digest)
                rec.gold_digest = gold.gold_digest(task, image, self._digest_config)
            elif task.answerable:
                rec.gold_rows = gold.gold_rows(task, image)
                rec.gold_ordered = gold.gold_ordered(task)
                stated = task.metadata.get("round_digits")  # the task's own tolerance
                if isinstance(stated, int) and not isinstance(stated, bool) and stated >= 0:
                    rec.gold_round_digits = stated
                if task.gold_alternatives:  # any-of scoring (clarisql.rewards.alternatives)
                    rec.gold_alternatives = gold.gold_alternatives(task, image)
        except gold.GoldError as e:
            gold_error = str(e)
        except Exception as e:  # the episode is recorded even when its final state cannot be read
            rec.final_digest = None
            why = (
                f"it took longer than the {self.limits.timeout_s:g} s step budget"
                if isinstance(e, apsw.InterruptError)
                else f"{type(e).__name__}: {e}"
            )
            digest_error = f"the final database state could not be digested: {why}"
        total, totals = score_episode(rec, self.reward_spec)
        out = {
            "record": rec.to_dict(),
            "reward": total,
            "reward_components": totals,
            "correct": is_correct(rec),
            "revealed": list(self._revealed),
        }
        if rec.labels_gold is not None:  # ODUTQA's label precision and recall (None: n/a)
            out["label_precision"] = rec.label_precision
            out["label_recall"] = rec.label_recall
            out["unneeded_clarifications"] = rec.unneeded_clarifications
        flags = [t.hallucinated for t in rec.turns if t.kind == "clarify"]
        out["hallucinated_messages"] = sum(flags)
        out["hallucination_rate"] = hallucination_rate(flags)
        if gold_error:
            out["gold_error"] = gold_error
        if digest_error:
            out["digest_error"] = digest_error
        if self._sim_fallback:  # the model-played user failed; the offline user answered
            out["simulator_fallback"] = self._sim_fallback
        for name, ext in self._session.extensions.items():  # e.g. SUQL's model-call counts
            if hasattr(ext, "episode_stats"):
                out[name] = ext.episode_stats()
        if final_state is not None:  # table-level diff against gold (never shown to the agent)
            out["state_diff"] = state_diff(task, final_state, image, self._digest_config)
        return out

    def _bounded_final_digest(self, task_gold: str | None) -> tuple[StateDigest, str]:
        """The session's final state and digest, within one step budget (else
        ``apsw.InterruptError``). The digest is the state key (changes against the image, no
        image table hashed: :mod:`clarisql.envs.state.deferred`), or the absolute digest when the
        task carries an absolute ``gold_digest`` to compare with."""
        assert self._session is not None
        self._session.trusted_deadline = time.monotonic() + self.limits.timeout_s
        try:
            state = session_state(self._session, self._digest_config)
            absolute = task_gold is not None and not task_gold.startswith("delta:")
            return state, state.absolute() if absolute else state.key()
        finally:
            self._session.trusted_deadline = None

    def _format(self, res: ExecResult) -> str:
        if not res.ok:
            return f"ERROR: {res.error}"
        if not res.columns:
            return f"OK: {res.changes} row(s) changed." if res.is_write else "OK."
        n = len(res.rows)
        shown = res.rows[: self.max_rows_shown]
        lines = [" | ".join(res.columns)]
        lines += [" | ".join("NULL" if v is None else str(v) for v in r) for r in shown]
        head = f"OK: {n} row(s){' (truncated at the result cap)' if res.truncated else ''}."
        more = f"\n... {n - len(shown)} more row(s) not shown" if n > len(shown) else ""
        return head + "\n" + "\n".join(lines) + more

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; use render_mode='ansi' or 'human'"
            )
            return None
        if self.render_mode == "human":
            print(self._dialogue, flush=True)
            return None
        return self._dialogue

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        self.simulator.close()


#: longest statement echoed into the dialogue (a longer one is refused by the session anyway:
#: ``SessionLimits.max_sql_chars``), so a refused megabyte does not come back in every reply
_MAX_ECHO_CHARS = 100_000


def _unit(label: Any) -> Any:
    """One thing a clarification can ask about: ``intent`` (any intent label), else the label's
    normalised ``(kind, content, slot)`` key, as the label gate matches them."""
    return "intent" if label.kind == "intent" else label.key()


def _describe(act: Action) -> str:
    if act.type == "clarify":
        labels = ", ".join(str(lb.to_json()) for lb in act.labels)
        return f"[ask_user] {act.question}" + (f" (labels: {labels})" if labels else "")
    if act.type == "execute":
        sql = act.sql if isinstance(act.sql, str) else repr(act.sql)
        if len(sql) > _MAX_ECHO_CHARS:  # refused as too long: not echoed back whole
            sql = f"{sql[:200]}… [{len(sql)} characters in all; not run]"
        return f"[execute_sql] {sql}"
    if act.type == "abstain":
        return f"[abstain] {act.reason}"
    if act.type == "search_tables":
        return f"[search_tables] {act.query} (k={act.k})"
    return "[stop]" + (f" {act.sql}" if act.sql else "")
