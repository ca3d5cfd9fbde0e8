"""``evoci images …`` and ``evoci sandbox prune``: argparse subcommands the main CLI registers.

    evoci images bootstrap [--name NAME] [--ca-bundle PATH|system] [--rebuild]
    evoci images load ARCHIVE
    evoci images list
    evoci sandbox prune [--older-than SECONDS] [--images]

Each handler returns an exit code; an error is one line saying what was wrong and what to do.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable

from evoci.errors import EvociError
from evoci.sandbox.docker import bootstrap
from evoci.sandbox.docker.cleanup import prune
from evoci.sandbox.docker.client import connect
from evoci.sandbox.docker.images import ImageStore
from evoci.sandbox.docker.options import DockerOptions
from evoci.settings import Paths


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``images`` and ``sandbox`` command groups; each leaf sets ``func(args) -> int``."""
    images = subparsers.add_parser("images", help="build, load and list Docker images for the docker sandbox")
    images_sub = images.add_subparsers(dest="images_command", required=True, metavar="COMMAND")

    boot = images_sub.add_parser("bootstrap", help="build the base image offline (debootstrap; needs root)")
    bootstrap.add_arguments(boot)
    boot.set_defaults(func=_with_logging(bootstrap.run))

    load = images_sub.add_parser("load", help="load a `docker save` archive (.tar or .tar.gz)")
    load.add_argument("archive", metavar="ARCHIVE")
    load.set_defaults(func=_guarded(_load))

    listing = images_sub.add_parser("list", help="list evoci's images with size and last use")
    listing.set_defaults(func=_guarded(_list))

    sandbox = subparsers.add_parser("sandbox", help="manage sandbox leftovers")
    sandbox_sub = sandbox.add_subparsers(dest="sandbox_command", required=True, metavar="COMMAND")
    pruning = sandbox_sub.add_parser("prune", help="remove every container labelled evoci=1")
    pruning.add_argument("--older-than", type=float, default=None, metavar="SECONDS", help="only containers older than this")
    pruning.add_argument("--images", action="store_true", help="also remove dangling evoci images")
    pruning.set_defaults(func=_guarded(_prune))


def _load(args: argparse.Namespace) -> int:
    store = ImageStore(connect(), Paths.default(), DockerOptions())
    for ref in store.load_archive(args.archive):
        print(ref)
    return 0


def _list(args: argparse.Namespace) -> int:
    store = ImageStore(connect(), Paths.default(), DockerOptions())
    rows = store.list()
    if not rows:
        print("no evoci images — run `evoci images bootstrap`")
        return 0
    print(f"{'ROLE':<8} {'SIZE':>9} {'LAST USED':>10}  {'ID':<12}  TAGS")
    now = time.time()
    for row in rows:
        used = f"{(now - row.last_used) / 3600:.1f}h ago" if row.last_used else "-"
        tags = ", ".join(row.tags) or "<untagged>"
        print(f"{row.role:<8} {row.size_bytes / 1e6:>7.0f}MB {used:>10}  {row.image_id.split(':')[-1][:12]:<12}  {tags}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    removed = prune(connect(), older_than=args.older_than, images=args.images)
    print(f"removed {len(removed)} container(s)/image(s)")
    return 0


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (EvociError, FileNotFoundError) as exc:
            print(f"evoci: error: {_one_line(exc)}", file=sys.stderr)
            return 1

    return run


def _with_logging(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        if not logging.getLogger().handlers:
            logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
        return handler(args)

    return run


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    return lines[0] if len(lines) == 1 else f"{lines[0]} … {lines[-1]}"
