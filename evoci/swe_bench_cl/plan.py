"""Which cells of the matrix a(i, j) a sequence of N issues attempts, and in which order.

Indexing as in ``cl_attempts.sql``: a(i, j) = issue j attempted with memory M(i), M(0) empty.

1. The memory-off pass: a(0, j) for every j (a(0, 1) is also issue 1's in-sequence attempt).
2. For j = 1..N: the in-sequence attempt a(j−1, j) (j ≥ 2), then **store** issue j's
   experience → M(j), then re-tests at stage j (they read M(j), never write it):
   - ``full``: a(j, k) for every k ≤ j — every cell forgetting F needs;
   - ``core``: the diagonal a(j, j), and at j = N the whole final row a(N, k).

``full`` attempts N + (N−1) + N(N+1)/2 cells; ``core`` N + (N−1) + N + (N−1) = 4N − 2, the
cells ACC, FT, BWT, AULC and CL-P read (F needs the off-diagonal re-tests too).
"""

from __future__ import annotations

from dataclasses import dataclass

MATRICES = ("full", "core")


@dataclass(frozen=True)
class Cell:
    stage: int  # i: the memory M(i) the attempt reads
    position: int  # j: the issue
    kind: str  # memory_off | in_sequence | retest


@dataclass(frozen=True)
class Store:
    position: int  # the issue whose experience enters memory, making M(position)
    source: Cell  # the attempt the experience comes from


def schedule(n: int, matrix: str = "full") -> list[Cell | Store]:
    """The steps for a sequence of ``n`` issues, in the order the protocol needs them."""
    if matrix not in MATRICES:
        raise ValueError(f"matrix must be one of {', '.join(MATRICES)}, got {matrix!r}")
    steps: list[Cell | Store] = [Cell(0, j, "memory_off") for j in range(1, n + 1)]
    for j in range(1, n + 1):
        attempt = steps[j - 1] if j == 1 else Cell(j - 1, j, "in_sequence")
        if j > 1:
            steps.append(attempt)
        steps.append(Store(j, attempt))
        retested = range(1, j + 1) if matrix == "full" or j == n else (j,)
        steps += [Cell(j, k, "retest") for k in retested]
    return steps


def cell_count(n: int, matrix: str) -> int:
    """How many cells ``schedule`` attempts (each one ``attempts`` times)."""
    return sum(1 for step in schedule(n, matrix) if isinstance(step, Cell))
