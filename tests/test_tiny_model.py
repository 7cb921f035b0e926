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
    # hybrid_override_pattern "ME*E" (tiny run.yaml): M = Mamba-2, E = MoE, * = attention (transformers names the
    # Mamba-2 block type "linear_attention"; the mixer classes say what each layer computes)
    from transformers.models.nemotron_h import modeling_nemotron_h as nh
    mixers = [type(layer.mixer) for layer in model.model.layers]
    assert len(mixers) == 4 and issubclass(mixers[0], nh.NemotronHMamba2Mixer), mixers
    assert mixers[1:] == [nh.NemotronHMoE, nh.NemotronHAttention, nh.NemotronHMoE], mixers
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
    eos = tok.eos_token_id
    calls = []

    def im_end_from_third_token(module, inputs, logits):  # forward 1 = prefill (token 1), then one per token
        calls.append(1)
        if len(calls) >= 3:
            logits = logits.clone()
            logits[..., eos] += 1e4
        return logits

    hook = model.lm_head.register_forward_hook(im_end_from_third_token)
    try:
        torch.manual_seed(0)
        ro = generate(model, tok, prompts, max_new_tokens=6, temperature=1.0, top_p=1.0)
    finally:
        hook.remove()
    assert ro.input_ids_BS.shape[0] == 2 and bool(ro.finished_B.all())
    for b in range(2):
        resp = ro.input_ids_BS[b][ro.mask_BS[b].bool()]
        # the response ends at its first <|im_end|> (token 3 at the latest), nothing is trained or kept after it
        assert 1 <= len(resp) <= 3 and resp[-1] == eos and bool((resp[:-1] != eos).all()), resp
        after = ro.input_ids_BS[b][int(ro.mask_BS[b].nonzero().max()) + 1:]
        assert bool((after == tok.pad_token_id).all()), after
    assert len(calls) <= 3  # generation stopped once every row had finished (no 6-token loop)
    # logits of a left-padded batch equal the unpadded ones
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        batched = model(**enc).logits[:, -1]
        single = model(**tok(prompts[0], return_tensors="pt", add_special_tokens=False)).logits[:, -1]
    assert torch.allclose(batched[0], single[0], atol=1e-5)
