"""Functional tests of Invoice.summary() (evoci's own NITR probe)."""

import argparse
import json
import sys
import unittest
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
parser.add_argument("--data_dir", required=True)
ARGS, _ = parser.parse_known_args()
sys.path.insert(0, str(Path(ARGS.case_root).resolve()))

from src.invoice import Invoice  # noqa: E402

CASES = json.loads((Path(ARGS.data_dir) / "summaries.json").read_text())


class SummaryTests(unittest.TestCase):
    def test_expected_summaries(self):
        for case in CASES:
            invoice = Invoice(case["customer"])
            for description, cents in case["lines"]:
                invoice.add(description, cents)
            self.assertEqual(invoice.summary(), "\n".join(case["expected"]))

    def test_empty_invoice_has_only_total(self):
        self.assertEqual(Invoice("nobody").summary(), "Total: $0.00")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
