"""The sandbox block: saved in Prefect, loaded by name, opens a working sandbox."""

from __future__ import annotations

import pytest

from evoci.blocks.sandbox import SandboxBlock
from evoci.domain import EnvironmentSpec
from evoci.settings import Paths

pytestmark = pytest.mark.usefixtures("prefect_server")


def test_a_saved_block_opens_the_sandbox_it_describes(tmp_path):
    SandboxBlock(kind="local", options={}).save("test-local", overwrite=True)
    block = SandboxBlock.load("test-local")
    assert block.config().kind == "local"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = block.open(workspace, EnvironmentSpec(), Paths(home=tmp_path / "home"))
    try:
        sandbox.write_file("hello.py", "print('hi from the sandbox')\n")
        result = sandbox.exec(["python", "hello.py"], timeout=60)
    finally:
        sandbox.cleanup()
    assert result.ok and result.stdout.strip() == "hi from the sandbox"


def test_an_unknown_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown sandbox 'dockr' — choose one of: docker, host, local"):
        SandboxBlock(kind="dockr").config()
