#!/usr/bin/env python3
"""In-container start-up check: the image's NeMo-RL fingerprint must equal the one in the lock file.

Runs inside the NeMo-RL container before the training driver (the rendered ``ray.sub`` COMMAND starts with it),
with whatever ``python3`` the image has: standard library only, no ``recipe`` import, so it runs from the code
snapshot without installing anything. NeMo-RL writes ``/opt/nemo_rl_container_fingerprint`` (a hash of
``pyproject.toml``, ``uv.lock`` and submodule SHAs, NEMO_RL.md §1) and only *warns* on a mismatch with mounted
code; NEMO_RL.md §9 pain point 3 recommends making it fatal, which this script does.

Exit codes: 0 match (or unpinned run explicitly allowed), 2 mismatch, 3 lock has no fingerprint, 4 file missing.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_FILE = "/opt/nemo_rl_container_fingerprint"


def check(lock_path: Path, fingerprint_file: Path, allow_unpinned: bool = False) -> tuple[int, str]:
    lock = json.loads(Path(lock_path).read_text())
    expected = lock.get("container_fingerprint")
    image = f"{lock.get('image')}:{lock.get('tag')}@{lock.get('digest')}"
    if not Path(fingerprint_file).is_file():
        return 4, (f"REFUSING TO LAUNCH: {fingerprint_file} not found. This is not a NeMo-RL release image "
                   f"(expected {image}).")
    actual = Path(fingerprint_file).read_text().strip()
    if not expected:
        msg = (f"lock file {lock_path} records no container fingerprint; the image reports {actual!r}. "
               f"Record it with: recipe cluster lock --fingerprint {actual}")
        return (0, "WARNING (unpinned run allowed): " + msg) if allow_unpinned else (3, "REFUSING TO LAUNCH: " + msg)
    if actual != expected:
        return 2, (f"REFUSING TO LAUNCH: container/lock mismatch. image fingerprint {actual!r} "
                   f"({fingerprint_file}) != lock fingerprint {expected!r} ({lock_path}, {image}). "
                   f"Use the locked image, or re-lock with `recipe cluster lock` and re-render.")
    return 0, f"container fingerprint {actual} matches {lock_path}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lock", required=True, type=Path)
    ap.add_argument("--fingerprint-file", default=DEFAULT_FILE, type=Path)
    ap.add_argument("--allow-unpinned", action="store_true")
    a = ap.parse_args(argv)
    code, msg = check(a.lock, a.fingerprint_file, a.allow_unpinned)
    print(msg, file=sys.stderr if code else sys.stdout)
    return code


if __name__ == "__main__":
    sys.exit(main())
