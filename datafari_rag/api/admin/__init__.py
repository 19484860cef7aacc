"""Administration: run-time settings, users, workflows and their keys, index jobs, health and metrics."""
