"""Small, real artifacts for hub tests: a tiny Llama checkpoint, a fake run dir, fake NVIDIA releases.

Nothing here is downloaded: the tokenizer is trained in-process with ``tokenizers`` and the model is a
2-layer ``LlamaConfig`` (a few thousand parameters). The "released" repos mimic the layout of NVIDIA's
releases (RECIPE.md §7: ``<config>/train.jsonl``, README ``configs``) with rows written here.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
FIXED_INPUT = "<|im_start|>user\nwhat is 2 + 3 ?<|im_end|>\n"


def build_tiny_checkpoint(out: Path, seed: int = 0) -> Path:
    """The project's tiny NemotronH (``recipe.model.build_tiny``), saved as the pipeline saves it."""
    from recipe.config import load_config
    from recipe.model.build import build_tiny, save_checkpoint
    cfg = load_config("tiny")
    splits = tiny_val_splits(cfg, n=40)
    corpus = [m["content"] for d in cfg.domains.names for r in splits[d]["val"] for m in r["messages"]]
    model, tok = build_tiny(cfg.model, corpus, seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    return save_checkpoint(model, tok, out)


def tiny_val_splits(cfg, n: int = 4) -> dict:
    from recipe.domains import build_tiny_splits

    spec = cfg.domains.tiny.model_copy(update={"train_items": n, "val_items": n})
    return build_tiny_splits(spec, cfg.domains.names, cfg.run.seed)


def tiny_validation_setup(n: int = 4, seed: int = 3):
    """(config, splits, model, tokenizer, evaluation config) for a small validation: the tiny NemotronH with a
    tokenizer trained on ``n`` validation prompts a domain, 8-token answers (tests/test_validation_lanes.py)."""
    from recipe.config import load_config
    from recipe.model.build import build_tiny

    cfg = load_config("tiny")
    splits = tiny_val_splits(cfg, n=n)
    corpus = [m["content"] for d in cfg.domains.names for r in splits[d]["val"] for m in r["messages"]]
    model, tok = build_tiny(cfg.model, corpus, seed=seed)
    tok.padding_side = "left"
    ecfg = cfg.evaluation.model_copy(update={"max_new_tokens": 8, "max_new_tokens_per_domain": {}})
    return cfg, splits, model, tok, ecfg


def build_llama_checkpoint(out: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([f"what is {a} + {b} ? the answer is {a + b}" for a in range(10) for b in range(10)],
                            trainer)
    from tokenizers import decoders

    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                   bos_token="<|im_start|>", eos_token="<|im_end|>")
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                      bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    model = LlamaForCausalLM(cfg)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    fast.save_pretrained(out)
    GenerationConfig(max_new_tokens=8, do_sample=False, eos_token_id=fast.eos_token_id,
                     pad_token_id=fast.pad_token_id).save_pretrained(out)
    return out


def make_fake_run(root: Path, run_id: str, stages=("sft", "if_rl"), seed: int = 0):
    """A run dir laid out by ``RunDir`` with done stages, checkpoints and validation scores."""
    from recipe.runs.layout import RunDir

    run = RunDir(root / run_id)
    run.write_json_atomic(run.run_json_path, {
        "run_id": run_id, "profile": "tiny", "seed": seed, "config_hash": "c0ffee" * 4,
        "git_commit": "0123456789abcdef0123456789abcdef01234567", "container_digest": "sha256:" + "ab" * 32,
        "started_at": "2026-11-29T00:00:00+00:00",
        "data_revisions": {"nvidia/Nemotron-Cascade-2-RL-data": "1" * 40}})
    from recipe.config import config_to_yaml, load_config

    run.config_path.write_text(config_to_yaml(load_config("tiny")))
    for i, stage in enumerate(stages):
        build_tiny_checkpoint(run.checkpoint_dir(stage), seed=seed + i)
        run.write_validation(stage, {"math": 0.25 + 0.1 * i, "mcqa": 0.5})
        run.write_manifest(stage, {"status": "done", "outputs": {"checkpoint": "checkpoint"}})
    return run


class _Evil:
    """Unpickling this creates ``marker`` -- proof that pickle ran code."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path(self.marker).touch, ())


def seed_released(hub, tmp: Path, evil_marker: Path) -> dict[str, str]:
    """Serve fake ``nvidia/*`` releases on ``hub``; returns {repo_id: commit}."""
    ckpt = build_llama_checkpoint(tmp / "released_ckpt", seed=7)  # fast; the tiny NemotronH is used for runs
    files = {str(p.relative_to(ckpt)): p.read_bytes() for p in ckpt.rglob("*") if p.is_file()}
    files["README.md"] = b"---\nlicense: other\n---\n# fake Nemotron-Cascade-2 (test)\n"
    files["pytorch_model.bin"] = pickle.dumps(_Evil(str(evil_marker)))
    files["modeling_evil.py"] = f"from pathlib import Path\nPath({str(evil_marker)!r}).touch()\n".encode()
    commits = {"nvidia/Nemotron-Cascade-2-30B-A3B": hub.seed_repo("model", "nvidia/Nemotron-Cascade-2-30B-A3B", files)}

    def rows(cfg: str, n: int, kind: str) -> bytes:
        out = []
        for i in range(n):
            if kind == "sft":
                out.append({"messages": [{"role": "user", "content": f"{cfg} question {i}"},
                                         {"role": "assistant", "content": f"<think>r{i}</think>answer {i}"}]})
            else:
                out.append({"responses_create_params": {"input": [{"role": "user", "content": f"{cfg} prompt {i}"}]},
                            "agent_ref": {"name": f"{cfg.lower()}_agent"}, "dataset": cfg, "id": f"{cfg}-{i}",
                            "ground_truth": str(i)})
        return "".join(json.dumps(r) + "\n" for r in out).encode()

    def card(configs: list[str]) -> bytes:
        lines = ["---", "license: other", "configs:"]
        for c in configs:
            lines += [f"- config_name: {c}", "  data_files:", "  - split: train", f"    path: {c}/*.jsonl"]
        return ("\n".join(lines) + "\n---\n# fake release (test)\n").encode()

    sft = ["math", "safety"]
    commits["nvidia/Nemotron-Cascade-2-SFT-Data"] = hub.seed_repo(
        "dataset", "nvidia/Nemotron-Cascade-2-SFT-Data",
        {"README.md": card(sft), **{f"{c}/train.jsonl": rows(c, 5, "sft") for c in sft}})
    rl = ["IF-RL", "MOPD"]
    commits["nvidia/Nemotron-Cascade-2-RL-data"] = hub.seed_repo(
        "dataset", "nvidia/Nemotron-Cascade-2-RL-data",
        {"README.md": card(rl), **{f"{c}/train.jsonl": rows(c, 4, "rl") for c in rl}})
    return commits
