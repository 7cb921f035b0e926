"""A loopback Hugging Face Hub-compatible server for tests (reads: olah offline; writes: ours)."""
