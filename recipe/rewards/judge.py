"""Pairwise judges (placeholder until the judge module lands)."""
