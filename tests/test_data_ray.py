"""The Ray Data backend runs the same logic as the in-process one: identical report and files."""
from __future__ import annotations

from pathlib import Path

from recipe.config import load_config
from recipe.data.curate import curate

FIX = Path(__file__).parent / "fixtures" / "data"


def test_ray_backend_matches_inprocess(tmp_path):
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        inputs = [FIX / "hub" / "Nemotron-Cascade-2-RL-data", FIX / "train_mixed.jsonl", FIX / "bad_rows.jsonl"]
        data = load_config("tiny").data
        kw = dict(decontaminate_against=[FIX / "eval_set.jsonl"], config=data)
        a = curate(inputs, tmp_path / "a", backend="inprocess", **kw)
        b = curate(inputs, tmp_path / "b", backend="ray", **kw)
    finally:
        ray.shutdown()
    strip = lambda r: {k: v for k, v in r.to_dict().items() if k not in ("elapsed_s", "created_at", "backend")}
    assert b.backend == "ray" and strip(a) == strip(b)
    assert a.quarantined > 0 and a.dropped["contaminated"] == 1 and a.reconciles
    for rel in a.outputs:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
