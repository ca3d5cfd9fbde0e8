#!/usr/bin/env python
"""Screenshot a flow run's pages in the Prefect UI with headless Chromium.

    .venv/bin/python scripts/screenshot.py [--api URL] [--flow-run ID|latest] [--out DIR]

Takes, in the UI served by the Prefect server at ``--api``:

1. the run's page with its Artifacts tab open (the task graph on top, the artifacts below);
2. the same for each of its subflow runs (a benchmark run's ``evolve`` runs: one node graph
   per task; of a subflow retried, the latest run);
3. the page of each ``…-summary`` markdown artifact (scores, tables and plots, rendered).

and stitches them, top to bottom, into ``DIR/flow-run-<id>.png`` (the parts are kept as
``DIR/NN-*.png``). It prints the stitched file's path. Chromium comes from
``scripts/chromium.sh`` (installs Debian's ``chromium`` when missing) or ``$EVOCI_CHROMIUM``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
FLAGS = [  # the flags that render the UI reliably headless (fresh profile per shot)
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--hide-scrollbars", "--virtual-time-budget=15000",
]


def chromium() -> str:
    env = os.environ.get("EVOCI_CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    out = subprocess.run(["bash", str(HERE / "chromium.sh")], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit(f"screenshot: no Chromium ({out.stderr.strip()}) — install it or set EVOCI_CHROMIUM")
    return out.stdout.strip().splitlines()[-1]


class Api:
    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.http = httpx.Client(timeout=30)

    def post(self, path: str, body: dict) -> list[dict]:
        response = self.http.post(f"{self.url}{path}", json=body)
        response.raise_for_status()
        return response.json()

    def flow_run(self, ref: str) -> dict:
        if ref != "latest":
            response = self.http.get(f"{self.url}/flow_runs/{ref}")
            response.raise_for_status()
            return response.json()
        runs = self.post("/flow_runs/filter", {
            "flow_runs": {"parent_task_run_id": {"is_null_": True}, "state": {"type": {"any_": ["COMPLETED", "FAILED"]}}},
            "sort": "START_TIME_DESC", "limit": 1})
        if not runs:
            sys.exit(f"screenshot: no finished flow run at {self.url}")
        return runs[0]

    def subflows(self, flow_run_id: str) -> list[dict]:
        runs = self.post("/flow_runs/filter", {"flow_runs": {"parent_flow_run_id": {"any_": [flow_run_id]}},
                                               "sort": "START_TIME_DESC"})
        latest: dict[str, dict] = {}
        for run in runs:  # newest first: keep the latest run of each name (a retried subflow runs again)
            latest.setdefault(run["name"], run)
        return sorted(latest.values(), key=lambda r: r["name"])

    def summary_artifact(self, flow_run_id: str) -> dict | None:
        artifacts = self.post("/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [flow_run_id]},
                                                                  "type": {"any_": ["markdown"]}},
                                                    "sort": "CREATED_DESC"})
        return next((a for a in artifacts if (a.get("key") or "").endswith("-summary")), None)


def shoot(browser: str, url: str, path: Path, width: int, height: int) -> Path:
    with tempfile.TemporaryDirectory(prefix="evoci-chromium-") as profile:
        subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                        f"--screenshot={path}", url], check=True, capture_output=True, timeout=120)
    if not path.is_file():
        sys.exit(f"screenshot: Chromium wrote nothing for {url}")
    return path


def stitch(parts: list[Path], path: Path) -> Path:
    from PIL import Image

    images = [Image.open(p).convert("RGB") for p in parts]
    sheet = Image.new("RGB", (max(i.width for i in images), sum(i.height for i in images) + 8 * len(images)), "white")
    y = 0
    for image in images:
        sheet.paste(image, (0, y))
        y += image.height + 8
    sheet.save(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", default=os.environ.get("PREFECT_API_URL", "http://127.0.0.1:4200/api"),
                        help="the Prefect API (default: $PREFECT_API_URL or http://127.0.0.1:4200/api)")
    parser.add_argument("--flow-run", default="latest", help="flow run id, or `latest` (the newest finished top-level run)")
    parser.add_argument("--out", default="screenshots", help="folder for the PNGs (default: ./screenshots)")
    parser.add_argument("--width", type=int, default=1600)
    args = parser.parse_args(argv)

    api = Api(args.api)
    ui = api.url.removesuffix("/api") + "/v2"  # the UI Prefect 3.8 defaults to; the older one is at /
    run = api.flow_run(args.flow_run)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    browser = chromium()
    pages: list[tuple[str, str, int]] = []
    for flow_run in [run, *api.subflows(run["id"])]:
        pages.append((f"run-{flow_run['name']}", f"{ui}/runs/flow-run/{flow_run['id']}?tab=Artifacts", 1100))
    for flow_run in [run, *api.subflows(run["id"])]:
        artifact = api.summary_artifact(flow_run["id"])
        if artifact:
            pages.append((f"artifact-{artifact['key']}", f"{ui}/artifacts/artifact/{artifact['id']}", 2600))
    parts = [shoot(browser, url, out / f"{n:02d}-{name}.png", args.width, height)
             for n, (name, url, height) in enumerate(pages, start=1)]
    print(stitch(parts, out / f"flow-run-{run['id']}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
