from pathlib import Path

from kvconf import dump, parse


def test_sections_nest():
    assert parse("a = 1\n[db]\nhost = x\n") == {"a": 1, "db": {"host": "x"}}


def test_sample_file_has_a_server_section():
    text = (Path(__file__).parent / "data" / "sample.conf").read_text()
    assert parse(text)["server"] == {"port": 8080}


def test_dump_round_trips():
    settings = {"name": "demo", "debug": False, "pad": " x ", "server": {"port": 8080}}
    assert parse(dump(settings)) == settings
