"""Benchmark rows through recipe/hub from a (loopback) Hub at a pinned commit: MathArena's parquet layout of the
genuine AIME 2025 rows is fetched, adapted to the suite's layout and scored; a missing file or revision is
'unavailable', never replaced by other rows; a mirror holding the file is preferred, and the mirror folder is the
config's, else the environment's."""
from __future__ import annotations

import io
from types import SimpleNamespace

import pandas as pd
import pytest

from hub_server.env import use_loopback_hub
from hub_server.fixtures import HubServer
from recipe.config.benchmarks_section import BenchmarkSource
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.sources import SourceUnavailable, load_rows, read_rows
from recipe.runs.layout import benchmark_mirror


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    server = HubServer.start(tmp_path_factory.mktemp("hub") / "srv")
    yield server
    server.stop()


def test_rows_from_the_hub_at_a_pinned_commit(hub, shared_dir, monkeypatch, tmp_path):
    use_loopback_hub(monkeypatch, hub.endpoint, tmp_path / "hf_home")
    genuine = read_rows(shared_dir / "fixtures/eval/aime25/test.txt")
    table = pd.DataFrame([{"problem_idx": i + 1, "problem": r["problem"], "answer": int(r["expected_answer"])}
                          for i, r in enumerate(genuine)])
    buf = io.BytesIO()
    table.to_parquet(buf)
    commit = hub.seed_repo("dataset", "MathArena/aime_2025", {"data/train-00000-of-00001.parquet": buf.getvalue()})
    src = BenchmarkSource(repo_id="MathArena/aime_2025", revision=commit, file="data/train-00000-of-00001.parquet")
    rows, prov = load_rows(src, mirror=None)
    assert prov["via"] == "hub" and prov["pinned"] and prov["rows"] == 30 and len(prov["sha256"]) == 64
    suite = get_suite("aime25")
    adapted = suite.adapt_rows(rows)
    assert [r["id"] for r in adapted] == [r["id"] for r in genuine]
    assert suite.score(adapted[0], f"<think>x</think>\\boxed{{{genuine[0]['expected_answer']}}}", True)["score"] == 1.0
    with pytest.raises(SourceUnavailable):
        load_rows(src.model_copy(update={"file": "data/missing.parquet"}), mirror=None)
    with pytest.raises(SourceUnavailable):
        load_rows(src.model_copy(update={"revision": "f" * 40}), mirror=None)
    mirrored = src.model_copy(update={"mirror_file": "fixtures/eval/aime25/test.txt"})
    assert load_rows(mirrored, mirror=shared_dir)[1]["via"] == "mirror"
    with pytest.raises(SourceUnavailable, match="has no nope.jsonl and the Hub is off; provide it with --benchmarks DIR"):
        load_rows(src.model_copy(update={"mirror_file": "nope.jsonl"}), mirror=shared_dir, allow_hub=False)


def test_the_mirror_folder_is_the_config_s_else_the_environment_s(monkeypatch, tmp_path, project_root):
    def cfg(mirror):
        return SimpleNamespace(benchmarks=SimpleNamespace(mirror=mirror))

    monkeypatch.delenv("RECIPE_BENCHMARK_MIRROR", raising=False)
    assert benchmark_mirror(cfg(None)) is None
    monkeypatch.setenv("RECIPE_BENCHMARK_MIRROR", str(tmp_path / "env"))
    assert benchmark_mirror(cfg(None)) == tmp_path / "env"
    assert benchmark_mirror(cfg(str(tmp_path / "set"))) == tmp_path / "set"
    monkeypatch.chdir(tmp_path)  # a relative folder is the project's, wherever the command runs
    assert benchmark_mirror(cfg("mirror/files")) == project_root / "mirror" / "files"
