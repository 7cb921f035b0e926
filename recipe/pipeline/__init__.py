"""The cascade as phases over a run directory: data -> stages -> report (local backend)."""
