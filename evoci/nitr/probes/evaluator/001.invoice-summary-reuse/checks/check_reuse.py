"""Structural oracle: the summary reuses src/money.format_cents (prints PASS:/FAIL: lines)."""

import argparse
import re
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
args = parser.parse_args()
text = (Path(args.case_root) / "src" / "invoice.py").read_text()
failures = []
if "format_cents" not in text:
    failures.append("invoice.py does not use format_cents")
if re.search(r"divmod|//\s*100|%\s*100|:,|:02d|\.2f", text):
    failures.append("invoice.py formats money itself")
for failure in failures:
    print(f"FAIL: {failure}")
if not failures:
    print("PASS: money formatting is reused")
sys.exit(1 if failures else 0)
