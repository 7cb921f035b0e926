"""Micro-batched updates (recipe.train.micro_batches): the loss and the accumulated gradient of a GRPO / MOPD update
and of an SFT step equal one pass over the whole batch, to float tolerance; the reference / teacher passes in pieces
give the one-pass log-probs."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
import torch

from recipe.model.chat_render import apply_template
from recipe.train.micro_batches import accumulate_gradients, logprobs_in_passes, loss_normalizer, row_chunks
from recipe.train.rl import policy_gradient
from recipe.train.rollout import generate, sequence_logprobs
from _tiny_llama import CORPUS, tiny_llama

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def llama():
    return tiny_llama()


def _rollouts(model, tok, prompts: int = 3, group: int = 4):
    """Groups of ``group`` samples of ``prompts`` prompts of different lengths: rows of different widths."""
    texts = [apply_template(tok, [{"role": "user", "content": "Add " + " and ".join(str(j) for j in range(i + 2))}],
                            add_generation_prompt=True) for i in range(prompts) for _ in range(group)]
    torch.manual_seed(1)
    return generate(model, tok, texts, max_new_tokens=10, temperature=1.0, top_p=1.0)


def _grads(model) -> dict[str, torch.Tensor]:
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def _scfg(estimator: str, normalization: str = "per_sequence"):
    return SimpleNamespace(advantage_estimator=estimator, temperature=0.8, kl_coef=0.05, importance_mask_low=0.5,
                           importance_mask_high=2.0, loss_normalization=normalization)


def _run(model, scfg, ro, micro, logprob_batch, **kw) -> tuple[dict, dict]:
    model.zero_grad(set_to_none=True)
    m = policy_gradient(model, scfg, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS, ro.inf_logprobs_BS,
                        micro_batch=micro, logprob_batch=logprob_batch, **kw)
    return m, _grads(model)


def _same(a: dict, b: dict, atol=1e-6, rtol=1e-4):
    assert a.keys() == b.keys() and a
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=atol, rtol=rtol, msg=lambda m: f"{k}: {m}")


@pytest.mark.parametrize("micro", [1, 3, 4, 5])
def test_a_micro_batched_grpo_update_has_the_one_pass_loss_and_gradient(llama, micro):
    model, tok = copy.deepcopy(llama[0]), llama[1]
    ro = _rollouts(model, tok)
    ref = copy.deepcopy(model)
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.05 * torch.randn_like(p))   # a reference away from the policy: the KL term is not 0
    adv_B = torch.linspace(-1.5, 1.5, ro.mask_BS.shape[0])
    scfg = _scfg("grpo")
    one, g_one = _run(model, scfg, ro, None, None, adv_B=adv_B, ref_model=ref)
    mb, g_mb = _run(model, scfg, ro, micro, 2, adv_B=adv_B, ref_model=ref)
    assert one["micro_batches"] == 1 and mb["micro_batches"] == len(row_chunks(ro.mask_BS.shape[0], micro)) > 1
    assert one["kl"] > 0
    for k in ("loss", "pg_loss", "kl"):
        assert mb[k] == pytest.approx(one[k], rel=1e-4, abs=1e-6), k
    _same(g_one, g_mb)


@pytest.mark.parametrize("normalization", ["per_sequence", "token_level"])
def test_a_micro_batched_mopd_update_has_the_one_pass_loss_gradient_and_metrics(llama, normalization):
    model, tok = copy.deepcopy(llama[0]), llama[1]
    ro = _rollouts(model, tok, prompts=4, group=2)
    t_a, t_b = copy.deepcopy(model), copy.deepcopy(model)
    with torch.no_grad():
        t_a.lm_head.weight.mul_(1.5)
        for p in t_b.parameters():
            p.add_(0.05 * torch.randn_like(p))
    inf = ro.inf_logprobs_BS.clone()
    inf[:, ::3] += 0.9 * ro.mask_BS[:, ::3]   # some ratios outside [0.5, 2]: the importance mask is at work
    ro.inf_logprobs_BS = inf
    domains = ["math", "chat"] * 4
    scfg = _scfg("opd", normalization)
    kw = dict(domains_B=domains, teachers={"math": t_a, "chat": t_b})
    one, g_one = _run(model, scfg, ro, None, None, **kw)
    mb, g_mb = _run(model, scfg, ro, 3, 1, **kw)
    assert 0 < one["masked_frac"] < 1
    for k in ("loss", "masked_frac", "ratio_mean", "reverse_kl"):
        assert mb[k] == pytest.approx(one[k], rel=1e-4, abs=1e-6), k
    _same(g_one, g_mb)


def test_a_micro_batched_sft_step_has_the_one_pass_gradient(llama):
    """The SFT loop's accumulation (recipe.train.sft): right-padded rows of different lengths, each micro-batch
    divided by the whole batch's tokens."""
    from recipe.train.micro_batches import trim_columns
    model = copy.deepcopy(llama[0]).train()
    tok = llama[1]
    enc = [tok(t, add_special_tokens=False)["input_ids"] for t in CORPUS[:7:2] + CORPUS[100:103]]
    S = max(map(len, enc))
    ids = torch.full((len(enc), S), tok.pad_token_id)
    attn = torch.zeros(len(enc), S, dtype=torch.long)
    mask = torch.zeros(len(enc), S)
    for b, e in enumerate(enc):
        ids[b, :len(e)], attn[b, :len(e)], mask[b, 5:len(e)] = torch.tensor(e), 1, 1.0
    n = int(mask.sum())

    def step(micro):
        model.zero_grad(set_to_none=True)

        def loss_of_rows(rows):
            c_ids, c_attn, c_mask = trim_columns([ids[rows], attn[rows], mask[rows]], attn[rows])
            lp = sequence_logprobs(model, c_ids, c_attn, c_mask)
            loss = -(lp * c_mask).sum() / n
            return loss, {"loss": loss.item()}
        return accumulate_gradients(loss_of_rows, mask, micro), _grads(model)

    (one, g_one), (mb, g_mb) = step(None), step(2)
    assert mb["micro_batches"] == 4 and mb["loss"] == pytest.approx(one["loss"], rel=1e-5)
    _same(g_one, g_mb)


def test_reference_log_probs_in_passes_equal_one_pass(llama):
    model, tok = llama
    ro = _rollouts(model, tok)
    one = sequence_logprobs(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS, 0.7)
    for size in (1, 5):
        parts = logprobs_in_passes(model, ro.input_ids_BS, ro.attention_mask_BS, ro.mask_BS, 0.7, size)
        torch.testing.assert_close(parts, one, atol=1e-5, rtol=1e-5)


def test_the_normalizer_counts_the_whole_batch():
    mask = torch.tensor([[0, 1, 1], [0, 0, 0], [1, 1, 1.0]])
    assert loss_normalizer(mask, per_sequence=False) == 5
    assert loss_normalizer(mask, per_sequence=True) == 2
    assert [len(c) for c in row_chunks(5, 2)] == [2, 2, 1] and len(row_chunks(5, None)) == 1


PEAK_SCRIPT = r"""
import json, sys, torch
from types import SimpleNamespace
torch.manual_seed(0)
torch.set_num_threads(1)
from recipe.model.pretrained import load_pretrained
from recipe.config import load_config
from recipe.train.device import StageMeter
from recipe.train.rl import policy_gradient
micro = None if sys.argv[2] == "none" else int(sys.argv[2])
cfg = load_config("small", [f"model.name={sys.argv[1]}"])
model, tok = load_pretrained(cfg.model)
model.train()
B, P, R = 16, 32, 128                  # 4 prompts x 4 samples: an IF-RL step's rows at a 128-token cap
prompts = torch.randint(100, 1000, (4, P)).repeat_interleave(4, 0)
ids = torch.cat([prompts, torch.randint(100, 1000, (B, R))], 1)
attn = torch.ones_like(ids)
mask = torch.zeros(ids.shape)
mask[:, P:] = 1.0
scfg = SimpleNamespace(advantage_estimator="grpo", temperature=1.0, kl_coef=0.0, loss_normalization="per_sequence")
for p in model.parameters():            # the gradients exist before the step in a training loop after step 1
    p.grad = torch.zeros_like(p)
meter = StageMeter(torch.device("cpu"))
policy_gradient(model, scfg, ids, attn, mask, torch.zeros(ids.shape), adv_B=torch.linspace(-1, 1, B),
                micro_batch=micro)
print(json.dumps({"peak_mb": meter.record(0)["peak_memory_mb"], "scope": meter.peak_scope}))
"""


def test_a_micro_batched_step_peaks_below_the_one_pass_step_on_smollm2(tmp_path):
    """Peak resident memory of one GRPO update on SmolLM2-135M (16 rows x 160 tokens, the LM head's 49K-word
    log-softmax on every response token): 4-row micro-batches stay well under one pass over the 16 rows."""
    import json
    import os
    import subprocess
    import sys

    from _smollm2 import smollm2_folder
    folder = smollm2_folder()
    script = tmp_path / "peak.py"
    script.write_text(PEAK_SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    peaks = {}
    for micro in ("none", "4"):
        r = subprocess.run([sys.executable, str(script), str(folder), micro], capture_output=True, text=True,
                           env=env, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        got = json.loads(r.stdout.strip().splitlines()[-1])
        if got["scope"] != "stage":
            pytest.skip("this kernel cannot reset the peak resident set (/proc/self/clear_refs)")
        peaks[micro] = got["peak_mb"]
    # one pass holds the logits, log-softmax and their gradients of 2,048 tokens x 49,152 words (~0.4 GB each)
    assert peaks["4"] < peaks["none"] - 500, peaks
