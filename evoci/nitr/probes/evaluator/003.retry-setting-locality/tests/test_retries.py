"""Functional tests of retrying transfers (evoci's own NITR probe)."""

import argparse
import dataclasses
import sys
import unittest
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
parser.add_argument("--data_dir")
ARGS, _ = parser.parse_known_args()
sys.path.insert(0, str(Path(ARGS.case_root).resolve()))

from src.config import TransferConfig  # noqa: E402
from src.transfer import fetch, upload  # noqa: E402


def flaky(failures: int, result=b"data"):
    calls = []

    def channel(*args):
        calls.append(args)
        if len(calls) <= failures:
            raise IOError(f"failure {len(calls)}")
        return result

    return channel, calls


def with_attempts(n: int) -> TransferConfig:
    fields = {f.name for f in dataclasses.fields(TransferConfig)}
    name = next(f for f in fields if "retr" in f or "attempt" in f)
    return TransferConfig(**{name: n})


class RetryTests(unittest.TestCase):
    def test_fetch_retries_up_to_three_times_by_default(self):
        channel, calls = flaky(2)
        self.assertEqual(fetch("u", channel, TransferConfig()), b"data")
        self.assertEqual(len(calls), 3)

    def test_fetch_gives_up_after_the_last_attempt(self):
        channel, calls = flaky(5)
        with self.assertRaises(IOError):
            fetch("u", channel, TransferConfig())
        self.assertEqual(len(calls), 3)

    def test_upload_retries(self):
        channel, calls = flaky(1, None)
        upload("u", b"x", channel, TransferConfig())
        self.assertEqual(len(calls), 2)

    def test_attempts_are_configurable(self):
        channel, calls = flaky(4)
        self.assertEqual(fetch("u", channel, with_attempts(5)), b"data")
        self.assertEqual(len(calls), 5)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
