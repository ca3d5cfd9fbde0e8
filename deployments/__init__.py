"""Deployments of evoci's flows: ``serve`` (what ``evoci serve`` runs), ``retry`` (the UI's
Retry, from code) and ``prefect.yaml`` (the work-pool route). See docs/operating.md."""

if __name__ != "evoci.deployments":  # the folder is on sys.path (e.g. a test run from the repository root)
    raise ImportError(f"import evoci.deployments, not {__name__}: this folder is installed as evoci.deployments, and a second "
                      "copy of its modules would hold a second copy of every flow, task and setting")

