"""What the Docker sandbox costs: the test node in a container vs bare pytest in the same image.

Suite: ``--tests`` tests (default 40) that each sleep ``--sleep`` seconds (default 0.025), so
pytest itself runs for about a second. Each measurement is the median of ``--repeats`` runs
(default 5) after one warm-up.

- **bare docker run**: ``docker run --rm --network none -v <ws>:/workspace`` of
  ``python -m pytest tests --json-report`` in the task image — the least anyone could do to run
  the suite in that image, container start and removal included. This is the fair baseline for
  "bare pytest in the same image": both sides pay for a container; the ratio shows what evoci
  adds (opening the sandbox, the attach stream, the report read-back and clean-up ``exec``,
  the per-container limits).
- **evoci test node**: ``open_docker_sandbox`` (image lookup) + ``run_pytest`` through
  ``DockerSandbox`` — what the test node does per iteration.
- **host pytest** (for reference): the same command on the host, no container.

Image build: the task image for a one-requirement environment built cold (image removed
first; pip downloads from the index) vs found cached (``images.get`` by tag).

    .venv/bin/python benchmarks/docker_overhead.py [--repeats 5] [--tests 40] [--sleep 0.025]

Goal: evoci test node / bare docker run ≤ 1.5.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docker.errors

from evoci.domain import EnvironmentSpec, SandboxConfig, TaskSpec
from evoci.swe_ci.grade import run_pytest
from evoci.sandbox.docker import ImageStore, DockerOptions, connect, open_docker_sandbox
from evoci.settings import Paths

GOAL = 1.5
BUILD_REQUIREMENTS = ("PyYAML",)


def make_suite(root: Path, tests: int, sleep: float) -> None:
    (root / "tests").mkdir(parents=True)
    body = "import time\n\n" + "".join(
        f"def test_{i}():\n    time.sleep({sleep})\n    assert {i} + 1 == {i + 1}\n\n" for i in range(tests)
    )
    (root / "tests" / "test_sleepy.py").write_text(body)


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, list[float]]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tests", type=int, default=40)
    parser.add_argument("--sleep", type=float, default=0.025)
    parser.add_argument("--build-repeats", type=int, default=3, help="cold builds to time (each downloads from the index)")
    args = parser.parse_args(argv)
    if shutil.which("docker") is None:
        print("the docker CLI is needed for the bare baseline; install docker.io", file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory(prefix="evoci-bench-") as tmp:
        tmp = Path(tmp)
        workspace = tmp / "runs" / "bench" / "suite" / "workspace"
        make_suite(workspace, args.tests, args.sleep)
        paths = Paths(home=tmp)
        config = SandboxConfig(kind="docker", options={"concurrency_limit_name": None})
        environment = EnvironmentSpec()
        image = open_docker_sandbox(config, workspace, environment, paths).image
        task = TaskSpec(task_id="suite", repo=str(workspace), base_ref="a", oracle_ref="b")
        pytest_args = ["python", "-m", "pytest", "tests", "--json-report", "-p", "no:cacheprovider", "-q"]

        def bare() -> None:
            cmd = ["docker", "run", "--rm", "--network", "none", "--user", "0:0", "-v", f"{workspace}:/workspace",
                   "-w", "/workspace", "-e", "PYTHONDONTWRITEBYTECODE=1", image, *pytest_args,
                   "--json-report-file=/tmp/report.json"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

        def node() -> None:
            sandbox = open_docker_sandbox(config, workspace, environment, paths)
            report = run_pytest(sandbox, task, timeout=600, output_limit=1_000_000)
            assert len(report.passed()) == args.tests, report.output_tail

        def host() -> None:
            subprocess.run([sys.executable, *pytest_args[1:], f"--json-report-file={tmp}/host.json"],
                           cwd=workspace, check=True, stdout=subprocess.DEVNULL)

        print(f"suite: {args.tests} tests × {args.sleep}s sleep; median of {args.repeats}", flush=True)
        bare_s, bare_all = median_time(bare, args.repeats)
        node_s, node_all = median_time(node, args.repeats)
        host_s, host_all = median_time(host, args.repeats)

        store = ImageStore(connect(), paths, DockerOptions.parse({}))
        spec = EnvironmentSpec(requirements=BUILD_REQUIREMENTS)
        tag = store.environment_tag(spec)
        cold = []
        for _ in range(args.build_repeats):
            try:
                store.client.images.remove(tag, force=True)
            except docker.errors.ImageNotFound:
                pass
            built = store.ensure(spec)
            assert built.built
            cold.append(built.seconds)
        cached = []
        for _ in range(args.repeats):
            found = store.ensure(spec)
            assert not found.built
            cached.append(found.seconds)

    rows = [
        ("bare docker run (pytest in image)", bare_s, bare_all, 1.0),
        ("evoci test node (DockerSandbox)", node_s, node_all, node_s / bare_s),
        ("host pytest, no container", host_s, host_all, host_s / bare_s),
    ]
    print(f"\n{'test run':<36} {'median s':>9} {'vs bare':>8}   runs")
    for name, med, runs, ratio in rows:
        print(f"{name:<36} {med:>9.3f} {ratio:>7.2f}x   {' '.join(f'{r:.2f}' for r in runs)}")
    cold_s, cached_s = statistics.median(cold), statistics.median(cached)
    print(f"\n{'task image (' + ', '.join(BUILD_REQUIREMENTS) + ')':<36} {'median s':>9} {'ratio':>8}   runs")
    print(f"{'cold build':<36} {cold_s:>9.3f} {'':>8}   {' '.join(f'{r:.2f}' for r in cold)}")
    print(f"{'cached (found by tag)':<36} {cached_s:>9.3f} {cold_s / cached_s:>7.0f}x   {' '.join(f'{r:.3f}' for r in cached)}")
    verdict = "meets" if node_s / bare_s <= GOAL else "MISSES"
    print(f"\ntest node / bare = {node_s / bare_s:.2f} ({verdict} the goal of ≤ {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
