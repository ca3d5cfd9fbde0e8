"""The command line as a user meets it: one --home/--db for every command that reads results, hints that
paste as printed, roles in the order they act, and tracebacks only with -v."""

from __future__ import annotations

import shlex

import pytest

from evoci.agents.base import AgentOutcome, ModelCall
from evoci.cli import build_parser, main
from evoci.store import Facts, IterationRow, TaskRow


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A results file with one scored run, in a home folder that is not the default one."""
    monkeypatch.delenv("EVOCI_HOME", raising=False)
    monkeypatch.delenv("EVOCI_DB", raising=False)
    monkeypatch.chdir(tmp_path)  # the default home (./.evoci) stays empty
    home = tmp_path / "elsewhere"
    facts = Facts(home / "evoci.duckdb")
    facts.run("r1", protocol="swe-ci", dataset="d", max_iterations=1, config_hash="h", config={})
    facts.task(TaskRow("r1", "t", "swe-ci", "done"))
    facts.targets("r1", "t", {"a": "target", "b": "target"})
    facts.iteration(IterationRow("r1", "t", 0, "ok", {"a": "passed", "b": "failed"}))
    call = [ModelCall(model="m", provider="replay")]
    facts.iteration(IterationRow("r1", "t", 1, "ok", {"a": "passed", "b": "passed"},
                                 architect=AgentOutcome(message="wrote the plan", calls=call),
                                 programmer=AgentOutcome(message="wrote the code", calls=call)))
    return home


@pytest.mark.parametrize("command", [["report"], ["trajectory", "r", "t", "1"], ["sql", "select 1"]])
def test_every_command_that_reads_results_takes_home_and_db_like_run(command):
    parser = build_parser()
    options = {a.dest: a.help for a in parser._subparsers._group_actions[0].choices["run"]._actions}
    reader = {a.dest: a.help for a in parser._subparsers._group_actions[0].choices[command[0]]._actions}
    assert {k: reader[k] for k in ("home", "db", "verbose")} == {k: options[k] for k in ("home", "db", "verbose")}
    parsed = parser.parse_args([*command, "--home", "h", "--db", "d", "-v"])
    assert (parsed.home, parsed.db, parsed.verbose) == ("h", "d", True)


def test_the_report_reads_the_home_it_is_given_and_its_hint_pastes_as_printed(home, capsys):
    assert main(["report", "--home", str(home)]) == 0
    out = capsys.readouterr().out
    [hint] = [line for line in out.splitlines() if line.startswith("query these numbers: ")]
    program, *args = shlex.split(hint.removeprefix("query these numbers: "))
    assert program.endswith("evoci") and args[-2:] == ["--db", str(home / "evoci.duckdb")]
    assert main(args + ["--format", "csv"]) == 0
    assert "r1,t," in capsys.readouterr().out


def test_a_trajectory_lists_the_architect_before_the_programmer(home, capsys):
    assert main(["trajectory", "r1", "t", "1", "--home", str(home)]) == 0
    out = capsys.readouterr().out
    assert out.index("wrote the plan") < out.index("wrote the code")
    calls = [line for line in out.splitlines() if "│ architect" in line or "│ programmer" in line]
    assert [c.split("│")[1].strip() for c in calls] == ["architect", "programmer"]


def test_an_unexpected_error_prints_one_line_and_the_traceback_only_with_v(home, capsys, monkeypatch):
    def broken(args):
        raise RuntimeError("something evoci did not foresee")

    monkeypatch.setattr("evoci.report.print_report", lambda *a, **k: broken(None))
    assert main(["report", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("evoci: RuntimeError: something evoci did not foresee — run the command again with -v "
                           "for the full traceback")
    with pytest.raises(RuntimeError):
        main(["report", "--home", str(home), "-v"])
