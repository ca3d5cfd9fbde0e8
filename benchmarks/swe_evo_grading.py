"""Benchmark: what SWE-EVO grading costs beyond the test command it runs.

For each instance of the built-in SWE-EVO demo, with its gold patch: the wall time of
``evoci.swebench.grade.grade`` (fresh grading tree from the base, patch applied, test files
restored, test_patch applied, hooks removed, the test command in the local sandbox, log
parsed) against the bare test command run with the same interpreter in the finished
grading tree (``bash -c <test_cmds>`` with the environment's bin first on PATH), medians of
--repeats alternating runs, as a ratio. Goal ≤ 1.2.

    .venv/bin/python benchmarks/swe_evo_grading.py [--repeats 7]

With ``--records DIR --repos DIR --instance ID`` it measures one real record instead (say the
public ``psf__requests_v2.27.0_v2.27.1``, unmodified): grading with the command evoci builds
(``evoci.swebench.command``: the record's ``test_cmds`` plus the ``test_patch``'s directives, the
spec's plugins) in the environment of the record's spec, against the official directive command
(``test_cmds`` + the same files) run bare with the same interpreter in the finished grading tree,
in a network namespace of its own (``unshare --user --map-root-user --net``, its loopback up), as
the sandbox has no network either and runs SWE-bench records as its own root.

Timings on shared machines are noisy: read the ratios, and re-run before trusting a change.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import git

from evoci.domain import SandboxConfig
from evoci.sandbox.environment import LocalEnvironments, resolve_environment
from evoci.settings import Paths
from evoci.swe_evo.demo import build_swe_evo_demo
from evoci.swe_evo.loader import load_swe_evo
from evoci.swebench.grade import GradeRequest, grade, grading_sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--records", help="a folder of SWE-bench-format records (with --repos and --instance)")
    parser.add_argument("--repos", help="the folder of <owner>__<name> clones")
    parser.add_argument("--instance", help="the record to measure")
    args = parser.parse_args()
    if args.records:
        real_instance(args)
        return
    home = Path(tempfile.mkdtemp(prefix="evoci-bench-"))
    paths = Paths(home=home)
    data = load_swe_evo(build_swe_evo_demo(home / "demo"))
    environment = resolve_environment({})
    built = LocalEnvironments(paths.envs).ensure(environment)
    rows = []
    for instance in data.instances:
        source = git.Repo(instance.repo_path)
        request = GradeRequest(base_sha=instance.base_commit, patch=instance.answers.patch,
                               test_patch=instance.answers.test_patch, test_cmds=instance.test_cmds,
                               log_parser=instance.log_parser, targets=[*instance.f2p, *instance.p2p], timeout_s=600)
        tree = home / "trees" / instance.instance_id
        env = {**os.environ, "PATH": f"{built.bin_dir}:{os.environ['PATH']}", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": "src:.", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
        graded, bare = [], []
        for _ in range(args.repeats):
            start = time.monotonic()
            result = grade(request, source, tree, grading_sandbox(SandboxConfig(), environment, paths,
                                                             silent_network=request.silent_network))
            graded.append(time.monotonic() - start)
            assert all(o == "passed" for o in result.outcomes.values()), result.output_tail
            start = time.monotonic()
            subprocess.run(["bash", "-c", instance.test_cmds], cwd=tree, env=env, capture_output=True, check=False)
            bare.append(time.monotonic() - start)
        rows.append((instance.instance_id, statistics.median(graded), statistics.median(bare)))
    print(f"| instance (medians of {args.repeats}) | grading s | bare test command s | ratio |")
    print("|---|---|---|---|")
    for name, g, b in rows:
        print(f"| {name} | {g:.3f} | {b:.3f} | **{g / b:.2f}** |")
    total_g, total_b = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| all three | {total_g:.3f} | {total_b:.3f} | **{total_g / total_b:.2f}** |")


def real_instance(args) -> None:
    """One public record graded as evoci grades it, against the official directive command run bare."""
    from evoci.swebench.command import official_command
    from evoci.tasks.swe_evo import EvoPrepared, grade_request

    home = Path(tempfile.mkdtemp(prefix="evoci-bench-"))
    paths = Paths(home=home)
    [instance] = [i for i in load_swe_evo(args.records, repos_dir=args.repos).instances if i.instance_id == args.instance]
    if instance.spec is None:
        raise SystemExit(f"no environment spec for {instance.repo} {instance.spec_key}")
    environment = instance.spec.environment()
    built = LocalEnvironments(paths.envs).ensure(environment)
    source = git.Repo(instance.repo_path)
    prepared = EvoPrepared(instance=instance, repo=instance.repo_path, base_sha=source.commit(instance.base_commit).hexsha,
                           environment=environment)
    request = grade_request(instance, prepared, instance.answers.patch, 1800)
    official = official_command(instance.test_cmds, instance.answers.test_patch).text
    plugins = " ".join(f"-p {p}" for p in request.pytest_plugins)  # the official image autoloads them
    tree = home / "tree"
    env = {**os.environ, "PATH": f"{built.bin_dir}:{os.environ['PATH']}", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": ":".join(request.pythonpath), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTEST_ADDOPTS": f"-p no:cacheprovider {plugins}"}
    graded, bare = [], []
    for _ in range(args.repeats):
        start = time.monotonic()
        result = grade(request, source, tree, grading_sandbox(SandboxConfig(), environment, paths,
                                                             silent_network=request.silent_network))
        graded.append(time.monotonic() - start)
        assert all(o in ("passed", "xfailed") for o in result.outcomes.values()), result.output_tail
        start = time.monotonic()
        # no network for the bare command either (as in the sandbox): a test that resolves a host name would
        # otherwise wait for DNS timeouts on the host and make the bare command the slow one. Its loopback is up,
        # as the sandbox's is (a fresh namespace's is down: a local test server could not be reached), and with
        # the spec's silent network its default route leads into it, as the sandbox's does.
        network = "ip link set lo up" + (" && ip route add default dev lo" if request.silent_network else "")
        subprocess.run(["unshare", "--user", "--map-root-user", "--net", "bash", "-c", f"{network} && {official}"],
                       cwd=tree, env=env, capture_output=True, check=False)
        bare.append(time.monotonic() - start)
    g, b = statistics.median(graded), statistics.median(bare)
    print(f"| {instance.instance_id} (gold, medians of {args.repeats}) | grading s | official directive command s | ratio |")
    print("|---|---|---|---|")
    print(f"| `{official}` | {g:.3f} | {b:.3f} | **{g / b:.2f}** |")


if __name__ == "__main__":
    main()
