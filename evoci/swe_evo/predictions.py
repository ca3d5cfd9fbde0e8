"""Existing predictions, read as they are: OpenHands ``output.jsonl`` and SWE-agent ``preds.json``.

OpenHands writes one JSON object per line with ``instance_id`` and ``test_result.git_patch``;
SWE-agent writes ``preds.json``, an object keyed by instance id (or a list) whose entries
hold ``model_patch``; SWE-bench's own ``predictions.jsonl`` has ``instance_id`` and
``model_patch`` per line. Every dataset instance is graded: one absent from the file, or
with an empty patch, has no prediction (scored 0 and flagged, never dropped).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evoci.errors import DatasetError
from evoci.untrusted import json_loads


def file_hash(path: str | Path) -> str:
    """Identity of a predictions file's content: a changed file is a new run."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise DatasetError(f"cannot read the predictions file ({exc.strerror}) — check the path", path=str(path)) from None


def load_predictions(path: str | Path) -> dict[str, str]:
    """instance id → patch text (possibly empty), from any of the three formats."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError("predictions file not found — pass an OpenHands output.jsonl or a SWE-agent preds.json",
                           path=str(path))
    text = path.read_text(errors="replace")
    try:
        whole = json_loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        if "instance_id" in whole:
            entries = [whole]
        else:
            entries = [{**(v if isinstance(v, dict) else {"model_patch": v}), "instance_id": k} for k, v in whole.items()]
    elif isinstance(whole, list):
        entries = whole
    else:
        entries = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    entries.append(json_loads(line))
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"not JSON ({exc.msg}) — output.jsonl holds one object per line",
                                       path=str(path), line=number) from None
    patches: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "instance_id" not in entry:
            raise DatasetError("a prediction without instance_id — is this an OpenHands or SWE-agent file?", path=str(path))
        patches[str(entry["instance_id"])] = _patch(entry)
    return patches


def _patch(entry: dict) -> str:
    result = entry.get("test_result")
    if isinstance(result, dict) and "git_patch" in result:
        return result.get("git_patch") or ""
    return entry.get("model_patch") or ""
