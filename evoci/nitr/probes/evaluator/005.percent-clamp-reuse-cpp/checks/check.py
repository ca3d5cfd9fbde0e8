"""Structural oracle: percent_of reuses clamp_int. Prints {"passed": bool, "findings": [...]}; exits 1 when it fails."""

import argparse
import json
import re
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--case_root", required=True)
args = parser.parse_args()
findings = []
path = Path(args.case_root) / "src" / "progress.cc"
text = re.sub(r"//.*", "", path.read_text()) if path.is_file() else ""
body = text[text.find("percent_of"):] if "percent_of" in text else ""
if not body:
    findings.append({"rule": "percent_of_location", "message": "percent_of is not defined in src/progress.cc"})
elif "clamp_int" not in body:
    findings.append({"rule": "reuse_clamp_int", "message": "percent_of does not call clamp_int"})
if re.search(r"std::(min|max|clamp)\b", text):
    findings.append({"rule": "no_duplicate_clamp", "message": "progress.cc re-implements clamping"})
print(json.dumps({"passed": not findings, "findings": findings}))
raise SystemExit(1 if findings else 0)  # the verdict is the exit code, as for NITR's own checks
