"""SWE-Bench-CL's semantic memory, kept in the results database so every stage is queryable in SQL.

An experience (arXiv 2507.00014 §5: the problem, a summary of the solution, the outcome and
the rationale) is stored once per issue when the issue is processed, at ``stage`` = its
sequence position j: memory M(i) is every experience of the sequence with stage ≤ i. Its
text lives in ``cl_experiences``; its vector (the embedded problem statement) in
``cl_embeddings_<dim>``, a ``FLOAT[dim]`` column, so retrieval is one DuckDB query ranked by
``array_cosine_similarity``.

Retrieval for an attempt at stage i returns the top-k experiences of the same run and
sequence with stage ≤ i (never another sequence's, never a later issue's) that are more similar
than ``min_similarity``, most similar first, then drops those that would overflow the token
budget. Re-tests read memory and
never write it: only ``store`` writes, and the flow calls it once per processed issue.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from evoci.settings import location
from evoci.store.db import reading, transaction
from evoci.store.postgres import is_postgres
from evoci.swe_bench_cl.embedding import Embedder


class MemoryConfig(BaseModel):
    enabled: bool = Field(True, description="False: every attempt runs without memory (the ablation).")
    top_k: int = Field(3, ge=1, description="At most this many experiences per prompt.")
    token_budget: int = Field(1500, ge=1, description="At most this many (estimated) tokens of experiences per prompt.")
    min_similarity: float = Field(0.0, ge=-1, le=1, description="Only experiences more similar than this are retrieved.")


class Experience(BaseModel):
    task_id: str
    problem: str
    solution_summary: str
    outcome: str  # resolved | unresolved
    rationale: str

    def text(self) -> str:
        return (f"Issue {self.task_id} ({self.outcome}).\nProblem: {self.problem.strip()}\n"
                f"Solution: {self.solution_summary.strip()}\nRationale: {self.rationale.strip()}")


@dataclass(frozen=True)
class Retrieved:
    experience: Experience
    stage: int
    similarity: float


def estimate_tokens(text: str) -> int:
    """About four characters per token: close enough for a budget, and the same on every machine."""
    return math.ceil(len(text) / 4)


def embeddings_table_sql(table: str, dim: int, *, postgres: bool = False) -> str:
    """The DDL of one embedding size's vector table (PostgreSQL keeps the vector as a plain array)."""
    vector = "real[]" if postgres else f"float[{dim}]"
    return f"""create table if not exists {table} (
        run_id varchar not null, sequence_id varchar not null, task_id varchar not null,
        embedding_model varchar not null, embedding {vector} not null,
        primary key (run_id, sequence_id, task_id))"""


class Memory:
    """The memory of one run (all its sequences), embedded with ``embedder``."""

    def __init__(self, db: Path, run_id: str, embedder: Embedder, config: MemoryConfig = MemoryConfig()):
        self.db, self.run_id, self.embedder, self.config = location(db), run_id, embedder, config
        self.table = f"cl_embeddings_{embedder.dim}"

    def store(self, sequence_id: str, stage: int, experience: Experience) -> None:
        """Add ``experience`` to M(stage) and every later stage; storing it again changes nothing."""
        [vector] = self.embedder.embed([experience.problem])
        key = [self.run_id, sequence_id, experience.task_id]
        with transaction(self.db) as con:
            con.execute(embeddings_table_sql(self.table, self.embedder.dim, postgres=is_postgres(self.db)))
            con.execute(
                """insert into cl_experiences values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
                [self.run_id, sequence_id, stage, experience.task_id, experience.problem, experience.solution_summary,
                 experience.outcome, experience.rationale, estimate_tokens(experience.text()), self.embedder.name,
                 datetime.now(timezone.utc).replace(tzinfo=None)])
            con.execute(f"insert into {self.table} values (?, ?, ?, ?, ?) on conflict do nothing",
                        [*key, self.embedder.name, vector])

    def retrieve(self, sequence_id: str, stage: int, query: str) -> tuple[list[Retrieved], float]:
        """The experiences of M(stage) most similar to ``query`` within top-k and the budget; and the seconds it took."""
        started = time.perf_counter()
        if stage < 1:
            return [], time.perf_counter() - started
        [vector] = self.embedder.embed([query])
        with reading(self.db, run_id=self.run_id) as con:
            exists = con.execute("select count(*) from duckdb_tables() where table_name = ?", [self.table]).fetchone()[0]
            rows = [] if not exists else con.execute(
                f"""select e.task_id, e.problem, e.solution_summary, e.outcome, e.rationale, e.stage,
                           array_cosine_similarity(v.embedding, ?::float[{self.embedder.dim}]) as similarity
                    from cl_experiences e
                    join {self.table} v using (run_id, sequence_id, task_id)
                    where e.run_id = ? and e.sequence_id = ? and e.stage <= ? and v.embedding_model = ?
                        and similarity > ?
                    order by similarity desc, e.stage desc
                    limit ?""",
                [vector, self.run_id, sequence_id, stage, self.embedder.name, self.config.min_similarity, self.config.top_k]).fetchall()
        chosen, used = [], 0
        for task_id, problem, summary, outcome, rationale, at, similarity in rows:
            experience = Experience(task_id=task_id, problem=problem, solution_summary=summary, outcome=outcome,
                                    rationale=rationale)
            cost = estimate_tokens(experience.text())
            if used + cost > self.config.token_budget:
                continue  # a shorter, less similar experience may still fit
            used += cost
            chosen.append(Retrieved(experience, at, float(similarity)))
        return chosen, time.perf_counter() - started


def render_memory(retrieved: list[Retrieved]) -> str:
    """The prompt block of retrieved experiences ('' when there are none)."""
    if not retrieved:
        return ""
    blocks = "\n\n".join(f"[{k}] {r.experience.text()}" for k, r in enumerate(retrieved, start=1))
    return ("Experiences from earlier issues of this repository (most similar first; they may be outdated — "
            f"the code in front of you is the truth):\n\n{blocks}")
