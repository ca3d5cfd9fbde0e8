"""Semantic memory: what is stored for issue j is retrieved for a later, similar issue of the same
sequence, never for another sequence or an earlier stage; retrieval respects top-k and the budget."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import pytest

from evoci.swe_bench_cl.embedding import EmbeddingConfig, HashingEmbedder, make_embedder
from evoci.swe_bench_cl.memory import Experience, Memory, MemoryConfig, render_memory

SLUG = "slugify keeps punctuation: slugify('Hello, World!') should drop the comma and the bang"
TRUNCATE = "add a truncate helper that shortens long text and appends an ellipsis"
LATER_SLUG = "slugify should collapse repeated dashes and drop punctuation from the slug"


def experience(task_id: str, problem: str) -> Experience:
    return Experience(task_id=task_id, problem=problem, solution_summary="Changed src/strkit/slug.py (+4 −2 lines).",
                      outcome="resolved", rationale="the issue's tests passed")


@pytest.fixture
def memory(tmp_path):
    return Memory(tmp_path / "evoci.duckdb", "run-1", HashingEmbedder(256))


def retrieved_ids(memory: Memory, sequence: str, stage: int, query: str) -> list[str]:
    return [r.experience.task_id for r in memory.retrieve(sequence, stage, query)[0]]


def test_an_experience_is_retrieved_for_a_later_similar_issue_of_its_sequence_only(memory):
    memory.store("seq-a", 1, experience("a-1", SLUG))
    memory.store("seq-a", 2, experience("a-2", TRUNCATE))
    memory.store("seq-b", 1, experience("b-1", LATER_SLUG))  # the closest text, but another sequence
    assert retrieved_ids(memory, "seq-a", 2, LATER_SLUG)[0] == "a-1"
    assert "b-1" not in retrieved_ids(memory, "seq-a", 2, LATER_SLUG)
    assert retrieved_ids(memory, "seq-b", 2, SLUG) == ["b-1"]
    # M(1) does not hold issue 2's experience; M(0) is empty (memory off)
    assert retrieved_ids(memory, "seq-a", 1, TRUNCATE) in ([], ["a-1"])
    assert "a-2" not in retrieved_ids(memory, "seq-a", 1, TRUNCATE)
    assert retrieved_ids(memory, "seq-a", 0, SLUG) == []


def test_storing_twice_changes_nothing_and_contents_per_stage_are_sql(memory):
    memory.store("seq-a", 1, experience("a-1", SLUG))
    memory.store("seq-a", 1, experience("a-1", "something else entirely"))
    memory.store("seq-a", 2, experience("a-2", TRUNCATE))
    with duckdb.connect(str(memory.db), read_only=True) as con:
        assert con.execute("select stage, task_id, problem from cl_experiences order by stage").fetchall() == [
            (1, "a-1", SLUG), (2, "a-2", TRUNCATE)]
        assert con.execute("select typeof(embedding) from cl_embeddings_256 limit 1").fetchone() == ("FLOAT[256]",)
        # memory M(i) of one stage, in SQL
        assert con.execute("select count(*) from cl_experiences where sequence_id = 'seq-a' and stage <= 1").fetchone() == (1,)


def test_top_k_and_the_token_budget_bound_what_reaches_the_prompt(tmp_path):
    memory = Memory(tmp_path / "evoci.duckdb", "run-1", HashingEmbedder(256), MemoryConfig(top_k=2))
    for k in range(1, 5):
        memory.store("seq-a", k, experience(f"a-{k}", f"{SLUG} variant {k}"))
    assert len(memory.retrieve("seq-a", 4, SLUG)[0]) == 2
    one = experience("x", SLUG)
    tight = Memory(memory.db, "run-1", memory.embedder,
                   MemoryConfig(top_k=4, token_budget=len(one.text()) // 4 + 10))
    found = tight.retrieve("seq-a", 4, SLUG)[0]
    assert len(found) == 1
    assert "Issue a-" in render_memory(found) and render_memory([]) == ""


class _Embeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /embeddings endpoint on the loopback: the hashing embedder, at 64 dimensions."""

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        vectors = HashingEmbedder(64).embed(body["input"])
        reply = {"object": "list", "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1},
                 "data": [{"object": "embedding", "index": k, "embedding": v} for k, v in enumerate(vectors)]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_any_openai_compatible_embeddings_endpoint_backs_the_memory(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = EmbeddingConfig(kind="openai", model="embed-small", dim=64,
                                 base_url=f"http://127.0.0.1:{server.server_port}/v1")
        memory = Memory(tmp_path / "evoci.duckdb", "run-1", make_embedder(config))
        memory.store("seq-a", 1, experience("a-1", SLUG))
        memory.store("seq-a", 2, experience("a-2", TRUNCATE))
        assert retrieved_ids(memory, "seq-a", 2, LATER_SLUG)[0] == "a-1"
        assert memory.embedder.name == "openai:embed-small"
    finally:
        server.shutdown()
