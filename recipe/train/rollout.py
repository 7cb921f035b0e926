"""Rollouts: render prompts with the chat template, sample responses, keep what the losses need.

A ``RolloutBatch`` holds ``input_ids_BS`` = [left-padded prompt | response | right pad], ``mask_BS`` (1 on response
tokens up to and including ``<|im_end|>``), the inference-time log-probs of the sampled tokens (pi_inf, from the
logits the sampler used), decoded response texts, and whether each response finished (emitted ``<|im_end|>``
before the token cap: unfinished = overlong).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import torch

from recipe.model.chat_render import apply_template
from recipe.model.decode import lean_decode_state, supports_lean_decode
from recipe.model.decode.checked_loop import decode_checked
from recipe.model.decode.llama import LlamaDecodeState
from recipe.model.decode.llama_static import StaticLlamaDecode
from recipe.model.decode.row_state import DecodeRows, compacting_order
from recipe.model.decode.token_sampling import DeviceSampler, sample_inverse_cdf, top_p_filter
from recipe.train.device import autocast

_BUCKET_OVERHEAD_TOKENS = 2048  # one more forward costs about as much as this many extra padded tokens (tiny, CPU)


@dataclass
class RolloutBatch:
    input_ids_BS: torch.Tensor
    attention_mask_BS: torch.Tensor
    mask_BS: torch.Tensor            # trained response tokens, aligned with input_ids (position t predicts t)
    inf_logprobs_BS: torch.Tensor    # log pi_inf of each sampled token (0 outside mask)
    texts: list[str]
    finished_B: torch.Tensor         # bool


def render_prompt(tokenizer, record: dict, thinking: bool) -> str:
    return apply_template(tokenizer, record["messages"], tools=record.get("tools"), add_generation_prompt=True,
                          enable_thinking=thinking)


def record_thinking(record: dict, stage_mode: str) -> bool:
    """Rollout mode: the stage's mode, or the record's own for ``as_prompted`` stages (default thinking)."""
    if stage_mode == "as_prompted":
        return record.get("mode") != "instruct"
    return stage_mode == "thinking"


def response_text(tokenizer, ids: list[int]) -> str:
    """Decode a response, keeping ``</think>`` and tool-call markers, dropping ``<|im_end|>`` and padding."""
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    out = []
    for i in ids:
        if i == eos:
            break
        if i != pad:
            out.append(i)
    return tokenizer.decode(out, skip_special_tokens=False)


def _unique_prompts(prompts: list[str]) -> tuple[list[str], torch.Tensor]:
    """Distinct prompts in first-seen order and, per input row, the index of its distinct prompt."""
    first: dict[str, int] = {}
    inverse = [first.setdefault(p, len(first)) for p in prompts]
    return list(first), torch.tensor(inverse, dtype=torch.long)


@torch.no_grad()
def generate(model, tokenizer, prompts: list[str], *, max_new_tokens: int, temperature: float, top_p: float,
             greedy: bool = False, lean_decode: bool = True, static_decode: bool | None = None,
             check_every: int = 8, on_step: Callable[[int, int], None] | None = None) -> RolloutBatch:
    """Sample responses with our own cached decoding loop (no Hugging Face ``generate``).

    - Prefix sharing: each distinct prompt is prefilled once and its KV / Mamba conv+SSM state is copied to every
      row that repeats it (a GRPO group's G samples), so the prompt costs 1/G of the naive prefill.
    - Finished rows (``<|im_end|>`` emitted) leave the batch: later steps run only the rows still generating (a
      finished row's slot takes a live row from the batch's end, so leaving moves few rows: ``compacting_order``).
    - Sampling: softmax(logits / T) after top-p (as ``TopPLogitsWarper``), drawn by inverse CDF with one uniform
      per row per step, drawn for every row each step so a row's randomness does not depend on the others.
      Nothing process-wide is patched. ``greedy`` takes the argmax.
    - Decode steps after the prefill run a lean step on plain tensors (the same math without Hugging Face's
      per-call overhead and cache copies), picked per architecture by :mod:`recipe.model.decode`:
      ``NemotronHDecodeState`` or ``LlamaDecodeState``; ``lean_decode=False`` or another architecture uses
      :class:`HFDecodeState` (HF's cached forward) behind the same interface.
    - ``static_decode`` (default: on CUDA, for Llama models, unless ``RECIPE_STATIC_DECODE=0``): the decode steps
      replay a captured CUDA graph on static buffers (:mod:`recipe.model.decode.llama_static`), sampling runs on
      the device (:class:`recipe.model.decode.token_sampling.DeviceSampler`) and the host looks for finished rows
      every ``check_every`` tokens (:func:`recipe.model.decode.checked_loop.decode_checked`); same outputs and
      distribution, other random numbers.
    The output layout equals Hugging Face's: [left-padded prompt | response, pad after <|im_end|>]. The model runs
    on its own device (bf16 autocast on CUDA, ``recipe.train.device``); the returned batch is on the CPU.
    ``on_step(tokens, live)``: called after each eager decode step with the response tokens so far and the rows
    still generating (a progress line for long evaluations; the CUDA-graph loop does not call it).
    """
    with autocast(_device(model)):
        return _generate(model, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=temperature,
                         top_p=top_p, greedy=greedy, lean_decode=lean_decode, static_decode=static_decode,
                         check_every=check_every, on_step=on_step)


def static_decode_by_default(device: torch.device) -> bool:
    """The CUDA-graph decode is the default on CUDA; ``RECIPE_STATIC_DECODE=0`` turns it off (the lean eager step
    then runs: same outputs, slower), a way around a CUDA or driver version where graph capture misbehaves."""
    return device.type == "cuda" and os.environ.get("RECIPE_STATIC_DECODE", "1") != "0"


def _device(model) -> torch.device:
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def _generate(model, tokenizer, prompts: list[str], *, max_new_tokens: int, temperature: float, top_p: float,
              greedy: bool, lean_decode: bool, static_decode: bool | None = None,
              check_every: int = 8, on_step: Callable[[int, int], None] | None = None) -> RolloutBatch:
    B = len(prompts)
    dev = _device(model)
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    uniq, inverse = _unique_prompts(prompts)
    enc = tokenizer(uniq, return_tensors="pt", padding=True, add_special_tokens=False)
    if tokenizer.padding_side != "left" and bool((enc["attention_mask"][:, -1] == 0).any()):
        raise ValueError("generate needs a left-padding tokenizer (tokenizer.padding_side = 'left')")
    prompt_ids, prompt_attn = enc["input_ids"][inverse], enc["attention_mask"][inverse]
    was_training = model.training
    model.eval()
    try:
        prefill = prefill_in_buckets if lean_decode and supports_lean_decode(model) else HFDecodeState.prefill
        state, logits_AV = prefill(model, enc["input_ids"].to(dev), enc["attention_mask"].to(dev), max_new_tokens,
                                   rows=inverse.to(dev))
        if static_decode is None:
            static_decode = static_decode_by_default(dev)
        if static_decode and isinstance(state, LlamaDecodeState):
            sampler = DeviceSampler(B, dev, temperature=temperature, top_p=top_p, greedy=greedy)
            resp, inf_lp, finished = decode_checked(StaticLlamaDecode.for_state(state), logits_AV, sampler,
                                                    max_new_tokens=max_new_tokens, eos=eos, pad=pad,
                                                    check_every=check_every)
            return _rollout_batch(tokenizer, prompt_ids, prompt_attn, resp, inf_lp, finished)
        resp = torch.full((B, max_new_tokens), pad, dtype=torch.long, device=dev)
        inf_lp = torch.zeros(B, max_new_tokens, device=dev)
        finished = torch.zeros(B, dtype=torch.bool, device=dev)
        active = torch.arange(B, device=dev)   # rows still generating, in state order
        R = 0                                  # decoding steps run = response columns
        for t in range(max_new_tokens):
            R = t + 1
            if greedy:
                tok_A = logits_AV.argmax(-1)
            else:
                scaled = top_p_filter(logits_AV / temperature, top_p)
                u_B = torch.rand(B).to(dev)     # drawn on the CPU generator: the same numbers on every device
                tok_A = sample_inverse_cdf(torch.softmax(scaled, -1), u_B[active])
                # pi_inf: the tempered (unfiltered) distribution, as the loss expects
                inf_lp[active, t] = torch.log_softmax(logits_AV / temperature, -1).gather(
                    -1, tok_A[:, None]).squeeze(-1)
            resp[active, t] = tok_A
            done_A = tok_A == eos
            if t + 1 == max_new_tokens:
                finished[active[done_A]] = True
                break
            if bool(done_A.any()):
                finished[active[done_A]] = True
                keep = compacting_order(done_A)     # finished rows' slots refilled from the tail
                if not len(keep):
                    break
                active, tok_A = active[keep], tok_A[keep]
                state.select(keep)
            logits_AV = state.step(tok_A)
            if on_step is not None:
                on_step(t + 1, len(active))
    finally:
        if was_training:
            model.train()
    return _rollout_batch(tokenizer, prompt_ids, prompt_attn, resp[:, :R].cpu(), inf_lp[:, :R].cpu(),
                          finished.cpu())


def _rollout_batch(tokenizer, prompt_ids, prompt_attn, resp, inf_lp, finished) -> RolloutBatch:
    """The batch of the prompts and their responses (CPU tensors [B, R]), masked after each row's first eos."""
    (B, P), R, eos = prompt_ids.shape, resp.shape[1], tokenizer.eos_token_id
    is_eos = resp == eos
    first_eos = torch.where(is_eos.any(1), is_eos.float().argmax(1), torch.full((B,), R))
    resp_mask = torch.arange(R)[None, :] <= first_eos[:, None]
    inf_lp = inf_lp * resp_mask
    texts = [response_text(tokenizer, r.tolist()) for r in resp]
    return RolloutBatch(
        input_ids_BS=torch.cat([prompt_ids, resp], 1),
        attention_mask_BS=torch.cat([prompt_attn.bool(), resp_mask], 1).long(),
        mask_BS=torch.cat([torch.zeros(B, P, dtype=torch.bool), resp_mask], 1).float(),
        inf_logprobs_BS=torch.cat([torch.zeros(B, P), inf_lp], 1), texts=texts, finished_B=finished)


class HFDecodeState:
    """Hugging Face's cached forward behind the lean decode states' interface (``select``, ``step``): the
    decode path for models the lean step does not cover, and the reference it is tested against."""

    def __init__(self, model, cache, attention_mask_AS: torch.Tensor):
        self.model, self.cache, self.attn_AS = model, cache, attention_mask_AS

    @classmethod
    def prefill(cls, model, input_ids_US, attention_mask_US, max_new_tokens: int, rows: torch.Tensor | None = None):
        """(state, last-position logits [A, V]) for the prompt rows ``rows`` (default: every prompt, in order)."""
        out = model(input_ids=input_ids_US, attention_mask=attention_mask_US, use_cache=True, logits_to_keep=1)
        state, logits = cls(model, out.cache, attention_mask_US), out.logits[:, -1].float()
        if rows is not None:
            state.select(rows)
            logits = logits[rows]
        return state, logits

    def select(self, rows: torch.Tensor) -> None:
        self.cache.reorder_cache(rows)
        self.attn_AS = self.attn_AS[rows]

    def step(self, tok_A: torch.Tensor) -> torch.Tensor:
        self.attn_AS = torch.cat([self.attn_AS, self.attn_AS.new_ones(len(tok_A), 1)], 1)
        out = self.model(input_ids=tok_A[:, None], attention_mask=self.attn_AS, cache=self.cache, use_cache=True)
        return out.logits[:, -1].float()


def prefill_in_buckets(model, input_ids_US, attention_mask_US, max_new_tokens: int,
                       overhead_tokens: int | None = None, rows: torch.Tensor | None = None
                       ) -> tuple[DecodeRows, torch.Tensor]:
    """Prefill left-padded prompts in length buckets (:func:`length_buckets`: prompts of very different lengths,
    e.g. 26-token IF prompts beside 150-token tool prompts, do not all run at the longest length) and join the
    buckets' states into one lean decode state whose attention keys are left-padded back to the common width.
    Returns the state and the last-position logits [A, V] for the prompt rows ``rows`` (default: every prompt, in
    input order), gathered in one copy."""
    U = input_ids_US.shape[0]
    plan = length_buckets(input_ids_US.cpu(), attention_mask_US.cpu(), torch.zeros(input_ids_US.shape),
                          overhead_tokens=overhead_tokens)   # planned on the CPU, as sequence_logprobs does
    state_cls = lean_decode_state(model)
    states, logits, order = [], [], []
    # several buckets: each state holds its prompt only; the columns for the new tokens come once, in the join
    bucket_new_tokens = max_new_tokens if len(plan) == 1 else 0
    for part_rows, lo, _hi in plan:
        part_rows = part_rows.to(input_ids_US.device)
        ids, attn = input_ids_US[part_rows, lo:], attention_mask_US[part_rows, lo:]
        out = model(input_ids=ids, attention_mask=attn, use_cache=True, logits_to_keep=1)
        states.append(state_cls.from_hf_cache(model, out.cache, attn, bucket_new_tokens))
        logits.append(out.logits[:, -1].float())
        order.append(part_rows)
        del out
    state = state_cls.concat(states, new_columns=max_new_tokens) if len(states) > 1 else states[0]
    del states
    pick = torch.argsort(torch.cat(order))          # input row -> row of the joined state
    if rows is not None:
        pick = pick[rows]
    if not torch.equal(pick, torch.arange(U, device=pick.device)):
        state.select(pick)
    return state, torch.cat(logits)[pick]


def sequence_logprobs(model, input_ids_BS, attention_mask_BS, mask_BS=None, temperature: float = 1.0, *,
                      on_device: bool = False, dists: bool = False):
    """log p(token_t | tokens_<t), aligned to positions ([B, S], position 0 = 0), from logits / ``temperature``.

    ``temperature``: the sampling temperature of the rollouts being scored, so that the trainer's log-probs are
    those of the distribution the tokens were drawn from (``_generate`` records ``inf_logprobs_BS`` the same way);
    NeMo-RL divides the training logits by the generation temperature likewise. 1.0 for SFT and plain scoring.

    With ``mask_BS`` only masked positions are computed (the LM head and softmax run on response tokens only,
    the bulk of the cost for a tiny model with long prompts); other positions are 0. Rows of very different
    lengths run in length buckets, each trimmed to its own columns (:func:`length_buckets`), and rows that repeat
    the same prompt (a GRPO group's G samples) share one prompt forward (:func:`_hidden_states`). Both are exact:
    the same values and gradients as one padded forward.

    ``dists`` (with ``mask_BS``): also return the whole distribution at each masked position, [N, V] with N =
    ``mask_BS.sum()`` in the row-major order of ``mask_BS.nonzero()`` (MOPD's teacher term,
    ``mopd.forward_kl_coef``, needs the teacher's whole distribution, not only the sampled token's log-prob).
    """
    if mask_BS is None:
        logits = model(input_ids=input_ids_BS, attention_mask=attention_mask_BS, use_cache=False).logits
        lp = torch.log_softmax(logits[:, :-1].float() / temperature, -1)
        lp = lp.gather(-1, input_ids_BS[:, 1:].unsqueeze(-1)).squeeze(-1)
        return torch.cat([torch.zeros_like(lp[:, :1]), lp], 1)
    # buckets and the positions to score are planned on the CPU; the model's device (bf16 autocast on CUDA) runs each
    # bucket; the log-probs land in one [B, S] tensor on the CPU, or (``on_device``) on the model's device, so that a
    # trainer's loss and backward need no device -> host copy and no wait for the device
    dev = _device(model)
    input_ids_BS, attention_mask_BS, mask_BS = (t.cpu() for t in (input_ids_BS, attention_mask_BS, mask_BS))
    out = torch.zeros(input_ids_BS.shape, dtype=torch.float32, device=dev if on_device else "cpu")
    position_BS = response_positions(mask_BS) if dists else None
    dists_NV = None
    for rows, lo, hi in length_buckets(input_ids_BS, attention_mask_BS, mask_BS):
        ids, attn, mask = (t[rows, lo:hi] for t in (input_ids_BS, attention_mask_BS, mask_BS))
        r_idx, c_idx = mask[:, 1:].bool().nonzero(as_tuple=True)
        with autocast(dev):
            hidden_BSH = _hidden_states(model, ids, attn, mask, dev)
            logits_NV = model.lm_head(hidden_BSH[_to(r_idx, dev), _to(c_idx, dev)]).float() / temperature
        all_NV = torch.log_softmax(logits_NV, -1)
        lp_N = all_NV.gather(-1, _to(ids[:, 1:][r_idx, c_idx], dev)[:, None]).squeeze(-1)
        out[_to(rows[r_idx], out.device), _to(lo + 1 + c_idx, out.device)] = lp_N.to(out.device)
        if dists:
            if dists_NV is None:
                dists_NV = all_NV.new_zeros(int(mask_BS.sum()), all_NV.shape[-1])
            dists_NV = dists_NV.index_put((_to(position_BS[rows[r_idx], lo + 1 + c_idx], dev),), all_NV)
    if dists:
        return out, dists_NV
    return out


def response_positions(mask_BS: torch.Tensor) -> torch.Tensor:
    """[B, S] -> the index of each masked position in the row-major order of ``mask_BS.nonzero()`` (-1 elsewhere):
    where ``sequence_logprobs(..., dists=True)`` puts that position's distribution."""
    idx = torch.full(mask_BS.shape, -1, dtype=torch.long)
    r_idx, c_idx = mask_BS.cpu().bool().nonzero(as_tuple=True)
    idx[r_idx, c_idx] = torch.arange(len(r_idx))
    return idx


def _to(t: torch.Tensor, dev: torch.device) -> torch.Tensor:
    """A CPU tensor on ``dev`` without waiting for the device (a host -> device copy queued on its stream)."""
    return t.to(dev, non_blocking=True)


def length_buckets(input_ids_BS, attention_mask_BS, mask_BS, max_buckets: int = 6,
                   overhead_tokens: int | None = None) -> list[tuple[torch.Tensor, int, int]]:
    """Split rows into contiguous groups of a length order, each with the column range it uses: ``(rows, lo,
    hi)``. Rows are ordered by their first used column (left padding), then by the last one, except that rows
    repeating a prompt stay in their original order, so a group's samples land in one bucket (prefix sharing).
    The split points are the optimal ones (dynamic programming over the order) for padded tokens + a per-forward
    overhead, with at most ``max_buckets`` buckets: two long rows in a batch of short ones get a bucket of their
    own instead of padding a quarter of the batch. 1 bucket when padding is small."""
    used = attention_mask_BS.bool() | mask_BS.bool()
    B, S = used.shape
    first = torch.where(used.any(1), used.float().argmax(1), torch.zeros(B, dtype=torch.long))
    last = S - used.flip(1).float().argmax(1)
    cols = mask_BS.bool().any(0).nonzero()
    grouped = False
    if len(cols) and int(cols[0]) > 0:
        P = int(cols[0])
        prefix = torch.cat([input_ids_BS[:, :P], attention_mask_BS[:, :P]], 1)
        grouped = 2 * len(torch.unique(prefix, dim=0)) <= B
    key = first * (S + 1) * B + (torch.arange(B) if grouped else last * B + torch.arange(B))
    order = torch.argsort(key)
    f, l = first[order].double(), last[order].double()
    # span[a, b] = columns a bucket of rows order[a..b] needs (b >= a): running max of last - running min of first
    idx = torch.arange(B)
    upper = idx[None, :] >= idx[:, None]
    hi_ab = torch.where(upper, l[None, :].expand(B, B), torch.tensor(float("-inf"))).cummax(1).values
    lo_ab = torch.where(upper, f[None, :].expand(B, B), torch.tensor(float("inf"))).cummin(1).values
    overhead = _BUCKET_OVERHEAD_TOKENS if overhead_tokens is None else overhead_tokens
    cost_ab = torch.where(upper, (hi_ab - lo_ab) * (idx[None, :] - idx[:, None] + 1) + overhead,
                          torch.tensor(float("inf")))       # one bucket = rows a..b inclusive
    best = cost_ab[0].clone()                                # best[b]: rows 0..b in at most k buckets
    starts = []                                              # level k: start row of the last bucket, -1 = as level k-1
    for _ in range(1, min(max_buckets, B)):
        # a new last bucket a+1..b after the best split of rows 0..a (column b=0 has no a: all inf)
        val, arg = (best[:-1, None] + cost_ab[1:, :]).min(0)
        better = val < best
        if not bool(better.any()):
            break
        starts.append(torch.where(better, arg + 1, -1))
        best = torch.where(better, val, best)
    # walk back from row B-1, one bucket per level (a level that did not improve row b defers to the one below)
    parts, b, k = [], B - 1, len(starts)
    while b >= 0:
        while k > 0 and int(starts[k - 1][b]) == -1:
            k -= 1
        a = 0 if k == 0 else int(starts[k - 1][b])
        rows = order[a:b + 1]
        parts.append((rows, int(first[rows].min()), int(last[rows].max())))
        b, k = a - 1, k - 1
    return parts[::-1]


def right_padded_only(attention_mask_BS: torch.Tensor) -> bool:
    """True when every row is ones then zeros (SFT batches): a causal model then needs no mask for the positions
    that are not padding, since no such position can see a pad to its right. Without the mask, attention runs as
    SDPA's causal kernel (no 4D mask is built) and the Mamba mixers skip their masking (SFT ~12% faster)."""
    a = attention_mask_BS.bool()
    return bool(a[:, 0].all()) and bool((a[:, 1:] <= a[:, :-1]).all())


def _hidden_states(model, input_ids_BS, attention_mask_BS, mask_BS, dev: torch.device) -> torch.Tensor:
    """Final hidden states [B, S, H] on ``dev`` of CPU tensors (planned on the CPU: no device sync). The columns
    before the first trained token (the prompt, in rollouts) run once per distinct prefix when at most half the rows
    are distinct; their KV / Mamba conv+SSM states are then copied (differentiably) to the rows that share them and
    only the remaining columns run per row. Values and gradients equal the plain forward's (a shared prefix has
    identical activations in every row) at every position that is not padding; right-padded rows run without a
    mask (:func:`right_padded_only`)."""
    cols = mask_BS.bool().any(0).nonzero()
    P = int(cols[0]) if len(cols) else 0
    B = input_ids_BS.shape[0]
    if P > 0:
        prefix = torch.cat([input_ids_BS[:, :P], attention_mask_BS[:, :P]], 1)
        uniq, inverse = torch.unique(prefix, dim=0, return_inverse=True)
    ids, attn = _to(input_ids_BS, dev), _to(attention_mask_BS, dev)
    if P == 0 or 2 * len(uniq) > B:
        mask = None if right_padded_only(attention_mask_BS) else attn
        return model.model(input_ids=ids, attention_mask=mask, use_cache=False)[0]
    first = _to(torch.full((len(uniq),), B, dtype=torch.long).scatter_reduce(0, inverse, torch.arange(B),
                                                                               reduce="amin"), dev)
    inverse = _to(inverse, dev)
    head = model.model(input_ids=ids[first, :P], attention_mask=attn[first, :P], use_cache=True)
    cache = head.cache
    cache.reorder_cache(inverse)
    tail = model.model(input_ids=ids[:, P:], attention_mask=attn, cache=cache, use_cache=True)
    return torch.cat([head[0][inverse], tail[0]], 1)
