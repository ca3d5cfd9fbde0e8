"""A programmer that takes its files' and folders' permissions away cannot leave its task unscored.

In both sandboxes an agent's commands run as the harness's own user, so ``chmod 000`` on a
folder or file it made (or ``555`` on one of the project's) binds the harness too, unless it
runs as root: root ignores permissions, so on the machines most users have, the harness's
scans and removals and ``git add`` raised ``Permission denied`` and the task ended as an
unscored infrastructure error, the same on every retry. The run here goes through the real
CLI, flow and sandbox, in a process without the capabilities that let root ignore permissions
(as itself when not root).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.flows.helpers import query
from tests.repos import calc_repo, write_dataset
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

REQUIREMENT = ("<requirements><requirement><location>src/calc/__init__.py</location><description>add sub</description>"
               "<contract>sub(a, b) = a - b</contract><acceptance>test_sub passes</acceptance></requirement></requirements>")
ARCHITECT = f"open('.evoci/requirement.xml', 'w').write({REQUIREMENT!r})\n"
PROGRAMMER = """
import os
os.makedirs("locked/inner")
open("locked/inner/mod.py", "w").write("x = 1\\n")
os.symlink("/etc", "locked/inner/escape")  # hidden from a harness that cannot look inside
os.chmod("locked/inner", 0)
os.chmod("locked", 0)
open("src/calc/__init__.py", "a").write("# changed, then made unreadable\\n")
os.chmod("src/calc/__init__.py", 0)  # a changed file git must hash
open("unreadable.py", "w").write("y = 2\\n")
os.chmod("unreadable.py", 0)  # a new file git must read to commit it
os.mkfifo(".gitignore")  # git opens it blocking: the node waited forever
os.mkfifo("src/.gitattributes")
os.chmod("src", 0o555)  # nothing in the project's own folder can be removed
os.chmod(".", 0o500)  # the tree's root too: nothing new could be made or removed there
"""
SANDBOXES = ["local", pytest.param("docker", marks=pytest.mark.docker)]  # both run commands as the harness's user
AS_NOT_ROOT = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"] if os.geteuid() == 0 else []


@pytest.fixture(params=SANDBOXES)
def sandbox(request) -> str:
    if request.param == "docker":
        request.getfixturevalue("base_image")
    return request.param


def test_a_programmer_locking_its_folders_is_scored_and_what_it_hid_is_found(tmp_path, prefect_server, redteam_home,
                                                                            sandbox):
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    env = {**{k: v for k, v in os.environ.items() if k not in ("EVOCI_HOME", "EVOCI_DB", "EVOCI_INJECT_FAULTS")},
           "PREFECT_API_URL": prefect_server}
    argv = [*AS_NOT_ROOT, sys.executable, "-m", "evoci.cli", "run", str(dataset), "--max-iterations", "1",
            "--home", str(redteam_home), "--sandbox", sandbox, "--agent", "command",
            "--agent-option", "env=" + json.dumps({"ARCHITECT": ARCHITECT, "PROGRAMMER": PROGRAMMER}),
            "--agent-option", 'command=["python", "-c", "import os; exec(os.environ[\'{role}\'.upper()])"]']
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1/1 tasks scored" in done.stdout

    db = redteam_home / "evoci.duckdb"
    assert query(db, "select status from tasks") == [("done",)]
    [(programmer, flags)] = query(db, "select programmer_status, integrity_flags from iterations where iteration = 1")
    assert programmer == "ok"
    assert any("locked/inner/escape: is a symbolic link to /etc" in f for f in flags), flags
