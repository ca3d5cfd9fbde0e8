"""Functional tests of rejection counting (evoci's own NITR probe)."""

import argparse
import sys
import unittest
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
parser.add_argument("--data_dir")
ARGS, _ = parser.parse_known_args()
sys.path.insert(0, str(Path(ARGS.case_root).resolve()))

from src import stats  # noqa: E402
from src.grader import Grader  # noqa: E402
from src.validator import Submission, Validator  # noqa: E402


class RejectionTests(unittest.TestCase):
    def setUp(self):
        stats.reset()

    def test_counts_accepted_and_rejected(self):
        batch = [Submission("ann", "ok"), Submission("bob", " "), Submission("cid", "x" * 2001), Submission("dee", "y")]
        self.assertEqual(Grader().grade(batch), ["ann", "dee"])
        self.assertEqual((stats.accepted, stats.rejected), (2, 2))

    def test_reset_clears_both(self):
        Grader().grade([Submission("bob", "")])
        stats.reset()
        self.assertEqual((stats.accepted, stats.rejected), (0, 0))

    def test_length_limit_is_inclusive(self):
        self.assertTrue(Validator().validate(Submission("ann", "x" * 2000)))
        self.assertFalse(Validator().validate(Submission("ann", "x" * 2001)))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
