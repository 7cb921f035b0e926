"""The card's IFEval metric (mean of prompt- and instruction-level strict accuracy) with its bootstrap CI, the
backends' agreement, and the 50_eval section's tables, on items written here."""
from __future__ import annotations

import json

import pytest

from recipe.eval.report.published_ifeval import (MAX_NEW_TOKENS, backend_agreement, card_metric, ifeval_sampling,
                                          notebook_summary, versus_card)


def _item(follow: list[bool], text: str = "x") -> dict:
    return {"samples": [{"prompt_strict": all(follow), "follow_strict": follow}],
            "responses": [{"content": text, "reasoning": None}]}


def _items(n: int = 200) -> dict:
    # prompt i has 1 + i % 3 instructions; instruction j of prompt i is followed when (i + j) % 4 != 0
    return {str(i): _item([(i + j) % 4 != 0 for j in range(1 + i % 3)], text=f"answer {i}") for i in range(n)}


def test_card_metric_is_the_mean_of_prompt_and_instruction_strict():
    items = _items()
    follows = [it["samples"][0]["follow_strict"] for it in items.values()]
    p = 100 * sum(all(f) for f in follows) / len(follows)
    i = 100 * sum(sum(f) for f in follows) / sum(len(f) for f in follows)
    m = card_metric(items)
    assert m["n"] == 200 and m["instructions"] == sum(len(f) for f in follows)
    assert m["prompt_level_strict"] == round(p, 2) and m["instruction_level_strict"] == round(i, 2)
    assert m["score"] == round((p + i) / 2, 2)
    assert m["ci_low"] < m["score"] < m["ci_high"] and m["ci_high"] - m["ci_low"] < 20
    assert card_metric(items, seed=1)["score"] == m["score"]
    v = versus_card(m, card=m["ci_high"] + 1)
    assert v["card_inside_ci"] is False and v["difference"] == round(m["score"] - m["ci_high"] - 1, 2)
    with pytest.raises(ValueError, match="no scored items"):
        card_metric({})


def test_backend_agreement_counts_identical_completions():
    a = _items(10)
    b = {k: json.loads(json.dumps(v)) for k, v in a.items()}
    b["3"]["responses"][0]["content"] = "answer 3 but longer"
    b["7"]["responses"][0]["content"] = "different"
    b["99"] = _item([True])  # only in b: not compared
    ag = backend_agreement(a, b)
    assert ag["n"] == 10 and ag["identical_completions"] == 8 and ag["same_prompt_verdict"] == 10
    assert ag["a"]["score"] == ag["b"]["score"]


def test_lighteval_settings_and_notebook_tables(tmp_path):
    s = ifeval_sampling()
    assert (s.temperature, s.top_p, s.max_tokens, s.k, s.thinking) == (0.0, 1.0, MAX_NEW_TOKENS, 1, False)
    absent = notebook_summary(tmp_path / "none.json")
    assert absent["scores"] is None and "bench_ifeval_smollm2.py" in absent["note"]
    assert "weights" in absent["settings"].index
    m = card_metric(_items())
    rep = {"vllm": {"card_metric": m, "versus_card": versus_card(m), "truncation_rate": 1.0},
           "agreement": backend_agreement(_items(5), _items(5))}
    (tmp_path / "r.json").write_text(json.dumps(rep))
    shown = notebook_summary(tmp_path / "r.json")
    assert shown["scores"].loc["vllm", "n"] == 200 and shown["scores"].loc["vllm", "model card"] == 29.9
    assert int(shown["agreement"].loc[0, "identical completions"]) == 5


def test_the_notebook_reads_the_report_where_the_benchmark_writes_it():
    """``notebooks/50_eval.ipynb`` calls ``notebook_summary()`` with no path: it must look in the benchmark's
    default output folder (``benchmarks/bench_ifeval_smollm2.py --out``), at the project root."""
    import ast
    from pathlib import Path

    from recipe.eval.report.published_ifeval import default_report_path
    bench = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_ifeval_smollm2.py"
    tree = ast.parse(bench.read_text())
    out_default = next(kw.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                       and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--out"
                       for kw in node.keywords if kw.arg == "default")
    parts = [n.value for n in sorted((n for n in ast.walk(out_default) if isinstance(n, ast.Constant)),
                                    key=lambda n: n.col_offset)]
    assert parts == ["runs", "bench_ifeval_smollm2"], parts  # ROOT / "runs" / "bench_ifeval_smollm2"
    assert default_report_path() == bench.parents[1] / "runs" / "bench_ifeval_smollm2" / "report.json"


def test_a_hub_import_is_benchmarked_as_it_is_and_named_in_the_settings(tmp_path, monkeypatch):
    """``bench_ifeval_smollm2.py --model-dir`` on a ``recipe model import --from-hub`` folder (the original bf16
    weights, where the Hub is reachable) must not overwrite it with the GGUF import, and the report's weights row must
    name what was evaluated."""
    import json

    import recipe.model.gguf_import as gguf_import
    from recipe.eval.report.published_ifeval import prepare_model, settings_table
    from recipe.model.gguf_import import MANIFEST_NAME
    hub = tmp_path / "hub"
    hub.mkdir()
    (hub / MANIFEST_NAME).write_text(json.dumps({"source": "hub", "origin": "HuggingFaceTB/SmolLM2-135M-Instruct",
                                                 "resolved_commit": "a" * 40}))
    calls = []
    monkeypatch.setattr(gguf_import, "import_gguf", lambda out, **kw: calls.append(out) or {"source": "gguf"})
    assert prepare_model(hub)["source"] == "hub" and calls == []
    weights = {r["setting"]: r["ours"] for r in settings_table(hub)}["weights"]
    assert weights.startswith("HuggingFaceTB/SmolLM2-135M-Instruct@aaaaaaaaaaaa") and "Q4_1" not in weights
    gguf = tmp_path / "gguf"  # anything else is the GGUF import's folder: imported (or reused) there
    assert prepare_model(gguf) == {"source": "gguf"} and calls == [gguf]
    assert "Q4_1" in {r["setting"]: r["ours"] for r in settings_table(gguf)}["weights"]
