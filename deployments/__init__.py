"""Deployments of evoci's flows: ``serve`` (what ``evoci serve`` runs), ``retry`` (the UI's
Retry, from code) and ``prefect.yaml`` (the work-pool route). See docs/operating.md."""
