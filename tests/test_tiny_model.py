"""The tiny model is a real NemotronHForCausalLM (hybrid Mamba-2 / MoE / attention) that trains, generates and
round-trips through a Hugging Face folder (safetensors, config, tokenizer + template, generation_config)."""
from __future__ import annotations

import torch
from transformers import NemotronHForCausalLM

from recipe.config import load_config
from recipe.domains import build_tiny_splits, tokenizer_corpus
from recipe.model import build_tiny, load_checkpoint, save_checkpoint
from recipe.train.rollout import generate, render_prompt


def _tiny():
    cfg = load_config("tiny", ["domains.tiny.train_items=200", "domains.tiny.val_items=20"])
    sp = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, 0)
    corpus = tokenizer_corpus(sp, list(sp), 100)
    model, tok = build_tiny(cfg.model, corpus, 0)
    return cfg, sp, model, tok


def test_hybrid_architecture_and_roundtrip(tmp_path):
    cfg, sp, model, tok = _tiny()
    assert isinstance(model, NemotronHForCausalLM)
    kinds = set(model.config.layers_block_type)
    assert {"mamba", "moe", "attention"} <= kinds or len(kinds) == 3, model.config.layers_block_type
    assert model.config.n_routed_experts == 8 and model.config.num_experts_per_tok == 2
    out = save_checkpoint(model, tok, tmp_path / "ck")
    names = {p.name for p in out.iterdir()}
    assert {"model.safetensors", "config.json", "generation_config.json", "tokenizer.json"} <= names
    assert not any(n.endswith((".bin", ".pt", ".pkl")) for n in names)
    m2, t2 = load_checkpoint(out)
    rec = dict(sp["math"]["val"][0])
    ids = tok(render_prompt(tok, rec, True), return_tensors="pt", add_special_tokens=False)
    with torch.no_grad():
        assert torch.allclose(model.eval()(**ids).logits, m2(**ids).logits, atol=1e-6)
    assert t2.apply_chat_template(rec["messages"], tokenize=False, add_generation_prompt=True).endswith("<think>\n")


def test_generation_stops_at_im_end_and_left_padding_is_exact():
    cfg, sp, model, tok = _tiny()
    prompts = [render_prompt(tok, sp["math"]["val"][0], True), render_prompt(tok, sp["tool_call"]["val"][0], True)]
    torch.manual_seed(0)
    ro = generate(model, tok, prompts, max_new_tokens=6, temperature=1.0, top_p=1.0)
    assert ro.mask_BS.sum(1).max() <= 6 and ro.input_ids_BS.shape[0] == 2
    # logits of a left-padded batch equal the unpadded ones
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        batched = model(**enc).logits[:, -1]
        single = model(**tok(prompts[0], return_tensors="pt", add_special_tokens=False)).logits[:, -1]
    assert torch.allclose(batched[0], single[0], atol=1e-5)
