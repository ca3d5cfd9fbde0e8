"""A silent network in the local sandbox: another host does not answer (a connection times out), the
sandbox's own loopback works, nothing else is there, and the command cannot change it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from evoci.domain import SandboxConfig
from evoci.sandbox import open_sandbox, resolve_environment
from evoci.sandbox.base import TESTBED, Layout
from evoci.sandbox.silent import SETUP_FAILED, wrap
from evoci.settings import Paths
from tests.sandbox import built_env, evoci_home  # noqa: F401  (built_env is a fixture)
from tests.sandbox.silent_probe import PROBE, host_listeners

SILENT = Layout(root="/testbed", as_root=True, silent_network=True)


def probe(tmp_path, tmp_path_factory, layout: Layout) -> dict:
    tree = tmp_path / "tree"
    tree.mkdir()
    sandbox = open_sandbox(SandboxConfig(kind="local"), tree, resolve_environment({}),
                           Paths(home=evoci_home(tmp_path_factory)), ephemeral=True, layout=layout)
    with host_listeners() as seen_from_host:
        result = sandbox.exec(["python", "-c", PROBE, *seen_from_host], timeout=60)
    assert result.exit_code == 0, result
    return json.loads(result.stdout)


def test_another_host_does_not_answer_and_nothing_leaves(tmp_path, tmp_path_factory, built_env):  # noqa: F811
    seen = probe(tmp_path, tmp_path_factory, SILENT)
    assert seen["far"].startswith("timeout") and seen["other"].startswith("timeout")
    assert seen["loopback"] == "ECONNREFUSED"  # its own loopback, with nothing listening
    assert seen["host"].startswith("timeout") and seen["host_unix"] == "ECONNREFUSED"  # the host's, listening
    assert seen["interfaces"] == ["lo"]
    assert seen["take_lo_down"] == "EPERM" and seen["capabilities"] == []


def test_without_it_another_host_is_unreachable_at_once(tmp_path, tmp_path_factory, built_env):  # noqa: F811
    seen = probe(tmp_path, tmp_path_factory, TESTBED)
    assert seen["far"] == "ENETUNREACH" and seen["interfaces"] == ["lo"]


def test_a_silent_network_needs_the_sandboxs_root():
    with pytest.raises(ValueError, match="as_root"):
        Layout(silent_network=True)


def test_the_setup_refuses_a_namespace_with_another_interface():
    """A namespace holding a real interface (a veth pair here) is never routed: the route would lead out."""
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed")
    script = 'ip link add evoci0 type veth peer name evoci1 && exec "$@"'
    ran = subprocess.run(["unshare", "--user", "--map-root-user", "--net", "--", "sh", "-c", script, "sh",
                          *wrap(sys.executable, ["true"], drop_caps=False)], capture_output=True, text=True)
    assert ran.returncode == SETUP_FAILED and "not only lo" in ran.stderr, ran
