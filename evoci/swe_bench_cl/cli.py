"""``evoci run`` for SWE-Bench-CL: a curriculum JSON (or ``swe-bench-cl-demo``) through the ``continual`` flow.

    evoci run swe-bench-cl-demo --agent gold
    evoci run curriculum.json --repos ~/clones --environments swebench-verified.json \\
        --agent llm --model gpt-4.1 --matrix core --attempts 3 --embedding hashing
"""

from __future__ import annotations

import argparse

from rich.markup import escape
from evoci.cli_common import print_run_report, run_config


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matrix", choices=["full", "core"], default="full",
                   help="SWE-Bench-CL: re-test every seen issue after each one (full: N + (N-1) + N(N+1)/2 cells) or "
                        "only the cells ACC/FT/BWT/AULC/CL-P need (core: 4N-2 cells) (default: full)")
    p.add_argument("--no-memory", action="store_true", help="SWE-Bench-CL: attempt every cell without memory (ablation)")
    p.add_argument("--top-k", type=int, default=3, help="SWE-Bench-CL: experiences per prompt (default: 3)")
    p.add_argument("--memory-tokens", type=int, default=1500, help="SWE-Bench-CL: token budget of the experiences (default: 1500)")
    p.add_argument("--embedding", default="auto", help="SWE-Bench-CL: auto (wordllama if installed, else hashing), hashing, "
                   "wordllama, or openai (with --embedding-model and --embedding-url) (default: auto)")
    p.add_argument("--embedding-model", help="SWE-Bench-CL: the embeddings endpoint's model")
    p.add_argument("--embedding-url", help="SWE-Bench-CL: an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--embedding-dim", type=int, default=256, help="SWE-Bench-CL: vector size (default: 256)")


def cmd_run(args: argparse.Namespace) -> int:
    from evoci.errors import InputError, LeaseLost, RunBusy
    from evoci.flows.continual import continual
    from evoci.report import console_for_output
    from evoci.swe_bench_cl.embedding import EmbeddingConfig
    from evoci.swe_bench_cl.memory import MemoryConfig

    config = run_config(args, "swe-bench-cl")
    console = console_for_output()
    memory = MemoryConfig(enabled=not args.no_memory, top_k=args.top_k, token_budget=args.memory_tokens)
    embedding = EmbeddingConfig(kind=args.embedding, model=args.embedding_model, base_url=args.embedding_url,
                                dim=args.embedding_dim)
    console.print(f"[bold]evoci[/] SWE-Bench-CL — dataset {args.dataset}, agent {config.programmer.kind}, matrix "
                  f"{args.matrix}, {args.attempts} attempt(s) per cell, memory {'off' if args.no_memory else 'on'}")
    from evoci import ephemeral

    ephemeral.start()
    failed = False
    try:
        summaries = continual(args.dataset, config, matrix=args.matrix, attempts=args.attempts, memory=memory,
                              embedding=embedding, repos=args.repos, environments=args.environments, home=args.home,
                              db=args.db, task_deployment=getattr(args, "task_deployment", None))
    except (InputError, RunBusy, LeaseLost):  # refused before anything ran (a changed config under this run id, an empty dataset)
        raise
    except Exception as exc:  # already recorded; say it plainly, then show what was scored and skipped
        console.print(f"[red]run ended with failures:[/] {escape(str(exc))}")
        summaries, failed = [], True
    return print_run_report(args, "swe-bench-cl", summaries, failed, console, "no sequence could be loaded")
