"""``code`` verifier (placeholder until the sandbox lands)."""
