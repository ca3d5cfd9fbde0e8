"""Functional tests of every report format (evoci's own NITR probe)."""

import argparse
import sys
import unittest
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
parser.add_argument("--data_dir")
ARGS, _ = parser.parse_known_args()
sys.path.insert(0, str(Path(ARGS.case_root).resolve()))

from src.report import export  # noqa: E402

ROWS = [("north", 12), ("south", 7)]


class FormatTests(unittest.TestCase):
    def test_text(self):
        self.assertEqual(export("Sales", ROWS, "text"), "Sales\nnorth: 12\nsouth: 7")

    def test_csv(self):
        self.assertEqual(export("Sales", ROWS, "csv"), "name,value\nnorth,12\nsouth,7")

    def test_json(self):
        self.assertEqual(export("Sales", ROWS, "json"),
                         '{"title":"Sales","rows":[{"name":"north","value":12},{"name":"south","value":7}]}')

    def test_markdown(self):
        self.assertEqual(export("Sales", ROWS, "markdown"),
                         "# Sales\n\n| name | value |\n|---|---|\n| north | 12 |\n| south | 7 |")

    def test_unknown_format(self):
        with self.assertRaises(ValueError):
            export("Sales", ROWS, "pdf")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
