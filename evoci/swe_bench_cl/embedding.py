"""Text embeddings for SWE-Bench-CL's semantic memory, chosen by ``EmbeddingConfig.kind``.

- ``hashing``: signed feature hashing of words and word pairs with sublinear term weights
  (a hashed TF-IDF without a corpus), L2-normalised. Pure Python, no download, deterministic.
- ``wordllama``: the static word embeddings shipped inside the ``wordllama`` wheel (MIT;
  256 dimensions, CPU, nothing downloaded at run time). Install ``evoci[cl]``.
- ``openai``: any OpenAI-compatible ``/embeddings`` endpoint (``base_url``, ``model``,
  the key from the environment variable ``api_key_env``, default ``OPENAI_API_KEY``).
- ``auto`` (the default) becomes ``wordllama`` when it is installed, else ``hashing``;
  the flow resolves it before the run id is derived, so the model is part of the run's identity.

Every embedder returns unit vectors of a fixed size (``dim``); a text with no words gets a
fixed unit vector, since DuckDB's cosine similarity of a zero vector is NaN.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from evoci.errors import InfrastructureError, InputError

KINDS = ("auto", "hashing", "wordllama", "openai")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


class EmbeddingConfig(BaseModel):
    kind: str = Field("auto", description="auto | hashing | wordllama | openai")
    dim: int = Field(256, ge=8, le=4096, description="Vector size (hashing; openai: what the endpoint returns).")
    model: str | None = Field(None, description="openai: the embedding model's name.")
    base_url: str | None = Field(None, description="openai: the endpoint, e.g. http://127.0.0.1:8000/v1.")
    api_key_env: str = "OPENAI_API_KEY"


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def resolve_embedding(config: EmbeddingConfig) -> EmbeddingConfig:
    """``auto`` made concrete (so the run's identity names the model), other kinds checked."""
    if config.kind not in KINDS:
        raise InputError(f"unknown embedding kind {config.kind!r} — choose one of: {', '.join(KINDS)}")
    if config.kind == "openai" and not (config.model and config.base_url):
        raise InputError("the openai embedding needs model and base_url (any OpenAI-compatible /embeddings endpoint)")
    if config.kind != "auto":
        return config
    try:
        import wordllama  # noqa: F401
    except ImportError:
        return config.model_copy(update={"kind": "hashing"})
    return config.model_copy(update={"kind": "wordllama", "dim": 256})


def make_embedder(config: EmbeddingConfig) -> Embedder:
    config = resolve_embedding(config)
    if config.kind == "hashing":
        return HashingEmbedder(config.dim)
    if config.kind == "wordllama":
        return WordLlamaEmbedder()
    return OpenAIEmbedder(config)


class HashingEmbedder:
    def __init__(self, dim: int = 256):
        self.dim = dim
        self.name = f"hashing-{dim}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        words = [w.lower() for w in _WORD.findall(text)]
        counts: dict[str, int] = {}
        for feature in (*words, *(f"{a} {b}" for a, b in zip(words, words[1:]))):
            counts[feature] = counts.get(feature, 0) + 1
        vector = [0.0] * self.dim
        for feature, count in counts.items():
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign * (1.0 + math.log(count))
        return _unit(vector)


class WordLlamaEmbedder:
    def __init__(self):
        try:
            import wordllama
        except ImportError:
            raise InputError("the wordllama embedding needs the wordllama package — pip install 'evoci[cl]'") from None
        # The wheel ships the weights and the tokenizer file; pointing the cache at the package
        # finds both (its default looks for the tokenizer elsewhere and would try to download it).
        package = Path(wordllama.__file__).parent
        self._model = wordllama.WordLlama.load(cache_dir=package, disable_download=True)
        self.dim = 256
        self.name = "wordllama-l2_supercat-256"

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.embed(texts, norm=True)
        return [_unit([float(x) for x in row]) for row in vectors]


class OpenAIEmbedder:
    def __init__(self, config: EmbeddingConfig):
        from openai import OpenAI

        self._client = OpenAI(base_url=config.base_url, api_key=os.environ.get(config.api_key_env) or "unused")
        self._model = config.model
        self.dim = config.dim
        self.name = f"openai:{config.model}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        try:
            response = self._client.embeddings.create(model=self._model, input=texts)
        except Exception as exc:  # the endpoint's fault: a typed error, so the node is retried
            raise InfrastructureError(f"the embeddings endpoint failed ({exc}); check base_url and the model name") from exc
        vectors = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
        if any(len(v) != self.dim for v in vectors):
            raise InputError(f"the embeddings endpoint returned {len(vectors[0])}-dimensional vectors, the config says "
                             f"dim={self.dim} — set embedding.dim to the model's size")
        return [_unit(list(map(float, v))) for v in vectors]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        return [1.0] + [0.0] * (len(vector) - 1)
    return [x / norm for x in vector]
