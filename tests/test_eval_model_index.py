"""Results travel with the checkpoint: the generated model card's model-index carries each evaluated suite with its
value, metric and settings, and round-trips through huggingface_hub's parser."""
from __future__ import annotations

from types import SimpleNamespace

from _tiny_checkpoint import build_tiny_checkpoint
from recipe.eval.backends.hf import HFBackend
from recipe.eval.benchmarks.suite_registry import get_suite
from recipe.eval.harness import evaluate_suite
from recipe.eval.sampling_settings import SamplingParams
from recipe.eval.sources import read_rows
from recipe.hub.model_index import eval_results_for_card


def test_model_index_entries_carry_value_and_settings(tmp_path, shared_dir):
    from huggingface_hub import ModelCard, ModelCardData
    from huggingface_hub.repocard_data import model_index_to_eval_results
    ck = build_tiny_checkpoint(tmp_path / "ck")
    run = SimpleNamespace(path=tmp_path / "run")
    rows = read_rows(shared_dir / "fixtures/eval/aime25/test.txt")[:2]
    res = evaluate_suite(get_suite("aime25"), rows, HFBackend(ck, batch_size=4),
                         SamplingParams(k=2, max_tokens=4, temperature=1.0, top_p=1.0), run.path / "eval" / "sft" / "aime25",
                         source={"repo_id": "MathArena/aime_2025", "revision": "main", "limit": 2})
    (entry,) = eval_results_for_card(run, "sft")
    assert entry.metric_value == res["score"] and entry.dataset_type == "MathArena/aime_2025"
    assert entry.dataset_revision == "main" and "slice" in entry.metric_name
    assert entry.metric_args["k"] == 2 and entry.metric_args["max_tokens"] == 4 and entry.metric_args["n"] == 2
    assert entry.metric_args["model_sha256"] == res["settings"]["model_sha256"]
    card = ModelCard.from_template(ModelCardData(model_name="m", eval_results=[entry]),
                                   template_str="---\n{{ card_data }}\n---\nbody")
    name, back = model_index_to_eval_results(card.data.to_dict()["model-index"])
    assert back[0].metric_args["k"] == 2 and back[0].metric_value == res["score"]
    assert eval_results_for_card(SimpleNamespace(path=tmp_path / "none"), "sft") == []
