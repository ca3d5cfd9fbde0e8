"""What SWE-Bench-CL's semantic memory costs: embedding throughput on CPU and retrieval time per attempt.

- **embedding throughput**: texts per second for each offline backend (``hashing``; ``wordllama``
  when installed), embedding ``--texts`` problem-statement-sized texts (about 600 characters)
  in batches of 32, median of ``--repeats`` runs after a warm-up.
- **retrieval per attempt**: ``Memory.retrieve`` on a results database whose memory holds
  ``--experiences`` experiences in one sequence (a long curriculum sequence has 50) plus as
  many in other sequences: embedding the query, the DuckDB ``array_cosine_similarity`` top-k
  query over the ``FLOAT[n]`` table, the token budget — what every attempt with memory pays.
  Median and 95th percentile of ``--queries`` retrievals.

    .venv/bin/python benchmarks/cl_memory.py [--texts 2000] [--experiences 50] [--queries 100]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from evoci.swe_bench_cl.embedding import EmbeddingConfig, make_embedder
from evoci.swe_bench_cl.memory import Experience, Memory

WORDS = ("parser query model field migration admin form view template cache url request response session "
         "ordering queryset filter annotate aggregate index constraint serializer widget locale timezone "
         "simplify matrix integral series limit solve expand factor printing latex unicode assumption").split()


def texts(n: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(90)) for _ in range(n)]


def throughput(kind: str, corpus: list[str], repeats: int) -> float | None:
    try:
        embedder = make_embedder(EmbeddingConfig(kind=kind))
    except Exception as exc:  # wordllama not installed
        print(f"  {kind}: skipped ({exc})")
        return None
    embedder.embed(corpus[:32])
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        for k in range(0, len(corpus), 32):
            embedder.embed(corpus[k:k + 32])
        runs.append(len(corpus) / (time.perf_counter() - started))
    return statistics.median(runs)


def retrieval(kind: str, experiences: int, queries: int, rng: random.Random) -> tuple[float, float] | None:
    try:
        embedder = make_embedder(EmbeddingConfig(kind=kind))
    except Exception:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "evoci.duckdb", "bench", embedder)
        for sequence in ("seq-a", "seq-b"):
            for j, problem in enumerate(texts(experiences, rng), start=1):
                memory.store(sequence, j, Experience(task_id=f"{sequence}-{j}", problem=problem,
                                                     solution_summary="Changed a.py (+3 −1 lines).",
                                                     outcome="resolved", rationale="the issue's tests passed"))
        times = [memory.retrieve("seq-a", experiences, q)[1] for q in texts(queries, rng)]
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--experiences", type=int, default=50)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(13)
    corpus = texts(args.texts, rng)
    print(f"embedding throughput ({args.texts} texts of ~600 characters, batches of 32, median of {args.repeats}):")
    for kind in ("hashing", "wordllama"):
        rate = throughput(kind, corpus, args.repeats)
        if rate is not None:
            print(f"  {kind}: {rate:,.0f} texts/s")
    print(f"retrieval per attempt ({args.experiences} experiences in the sequence, {args.experiences} in another, "
          f"{args.queries} queries):")
    for kind in ("hashing", "wordllama"):
        result = retrieval(kind, args.experiences, args.queries, rng)
        if result is not None:
            print(f"  {kind}: median {1000 * result[0]:.1f} ms, p95 {1000 * result[1]:.1f} ms")


if __name__ == "__main__":
    main()
