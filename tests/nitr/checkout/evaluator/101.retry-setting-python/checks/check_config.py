"""Fixture check (Python convention): PASS:/FAIL: lines and the exit code."""

import argparse
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
args = parser.parse_args()
text = (Path(args.case_root) / "src" / "config.py").read_text()
if "attempts" in text or "retries" in text:
    print("PASS: the retry setting lives in TransferConfig")
    sys.exit(0)
print("FAIL: TransferConfig has no retry setting")
sys.exit(1)
