"""Hub throughput on the loopback test server (run on demand: `python benchmarks/bench_hub.py`).

Measures, for a few file sizes: publish (create_commit with LFS upload), download (snapshot_download via
olah offline), and the sha256 pass of the download manifest. Loopback numbers bound our own overhead;
real-Hub speed is network-bound (and Xet-accelerated there). Prints a table; asserts nothing.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ["HF_HUB_DISABLE_XET"] = "1"


def main() -> None:
    from hub_server.fixtures import HubServer

    tmp = Path(tempfile.mkdtemp(prefix="bench_hub_"))
    hub = HubServer.start(tmp / "srv")
    os.environ["HF_ENDPOINT"] = hub.endpoint
    from huggingface_hub import CommitOperationAdd, HfApi, snapshot_download

    from recipe.runs.content_hashes import sha256_file

    api = HfApi(endpoint=hub.endpoint, token=False)
    rows = []
    try:
        for mb in (1, 8, 32):
            repo = f"bench/m{mb}"
            src = tmp / f"src{mb}" / "model.safetensors"
            src.parent.mkdir()
            src.write_bytes(os.urandom(mb * 2**20))
            api.create_repo(repo, exist_ok=True)
            t0 = time.perf_counter()
            api.create_commit(repo, operations=[CommitOperationAdd("model.safetensors", str(src))],
                              commit_message="bench")
            up = time.perf_counter() - t0
            t0 = time.perf_counter()
            out = snapshot_download(repo, local_dir=tmp / f"dl{mb}", endpoint=hub.endpoint, token=False)
            down = time.perf_counter() - t0
            t0 = time.perf_counter()
            assert sha256_file(Path(out) / "model.safetensors") == sha256_file(src)
            sha = (time.perf_counter() - t0) / 2
            rows.append((mb, up, down, sha))
    finally:
        hub.stop()
    print(f"{'size MB':>8} {'publish s':>10} {'MB/s':>7} {'download s':>11} {'MB/s':>7} {'sha256 s':>9}")
    for mb, up, down, sha in rows:
        print(f"{mb:>8} {up:>10.2f} {mb / up:>7.1f} {down:>11.2f} {mb / down:>7.1f} {sha:>9.3f}")


if __name__ == "__main__":
    main()
