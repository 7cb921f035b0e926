"""Would this model have generated that completion greedily? A teacher-forced check of another backend's output.

Greedy decoding is a function of the model: at every position it takes the argmax of the next-token logits. So a
completion ``c`` that a server (vLLM) produced greedily is exactly what an in-process Hugging Face model would
produce iff, fed ``prompt + c`` in one forward pass, the model's argmax at each completion position is the token
that follows (and, for a completion that stopped, the end-of-turn token comes last). One prefill per prompt checks
a 1280-token completion, where generating it again costs 1280 decode steps; a prompt that fails the check is
generated again by the in-process backend (``recipe.eval.backends.hf``) and scored on its own completion.

What the check reports per prompt: identical or not, the first position where the argmax differs, the logit gap
there (near 0 = a near-tie that kernels may break either way) and the smallest top-1/top-2 gap along the agreed
path. A completion whose text does not re-tokenize to the server's token count (a different tokenization of the
same text) is reported as ``retokenized`` and not judged: it must be generated again as well.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Iterable

import torch


@dataclass
class GreedyVerdict:
    item_id: str
    identical: bool
    n_completion_tokens: int
    first_divergence: int | None = None       # token index into the completion where the argmax differs
    gap_at_divergence: float | None = None    # logit(argmax) - logit(served token) there
    min_gap: float | None = None              # smallest top-1 minus top-2 logit along the agreed prefix
    reason: str | None = None                 # why it could not be judged (retokenized, prompt token count differs)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class ServedCompletion:
    """One greedy completion from a server: the rendered prompt text and what the server reported about it."""
    item_id: str
    prompt_text: str
    completion: str
    finish_reason: str | None            # "stop" (ended with the end-of-turn token) or "length"
    prompt_tokens: int | None = None     # the server's usage counts, when it reported them
    completion_tokens: int | None = None


def _encode(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def _targets(tokenizer, sc: ServedCompletion, eos_id: int) -> tuple[list[int], list[int], str | None]:
    """(prompt ids, completion ids incl. end-of-turn when it stopped, reason it cannot be judged or None)."""
    p = _encode(tokenizer, sc.prompt_text)
    c = _encode(tokenizer, sc.completion)
    if sc.finish_reason == "stop":
        c = c + [eos_id]
    if sc.prompt_tokens is not None and sc.prompt_tokens != len(p):
        return p, c, f"prompt is {len(p)} tokens here, {sc.prompt_tokens} on the server"
    if sc.completion_tokens is not None and sc.completion_tokens != len(c):
        return p, c, f"completion re-tokenizes to {len(c)} tokens, the server generated {sc.completion_tokens}"
    if tokenizer.decode(c[:-1] if sc.finish_reason == "stop" else c) != sc.completion:
        return p, c, "completion does not survive an encode/decode round trip"
    return p, c, None


@torch.no_grad()
def verify_greedy(model, tokenizer, served: Iterable[ServedCompletion], *, batch_size: int = 4,
                  progress: Callable[[int], None] | None = None) -> list[GreedyVerdict]:
    """Teacher-force each served completion through ``model`` and compare its argmax path (see the module doc).
    Sequences are batched by length with right padding (causal attention: padding after a row changes nothing
    before it); logits are computed only at the completion positions."""
    eos_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if eos_id is None or eos_id == tokenizer.unk_token_id:
        eos_id = tokenizer.eos_token_id
    was_training = model.training
    model.eval()
    decoder, head = model.get_decoder(), model.get_output_embeddings()
    prepared, verdicts = [], {}
    for sc in served:
        p, c, reason = _targets(tokenizer, sc, eos_id)
        if reason or not c:
            verdicts[sc.item_id] = GreedyVerdict(sc.item_id, False, len(c), reason=reason or "empty completion")
        else:
            prepared.append((sc.item_id, p, c))
    order = sorted(prepared, key=lambda t: len(t[1]) + len(t[2]))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_id
    try:
        for i in range(0, len(order), batch_size):
            chunk = order[i:i + batch_size]
            L = max(len(p) + len(c) for _, p, c in chunk)
            ids = torch.full((len(chunk), L), pad, dtype=torch.long)
            attn = torch.zeros((len(chunk), L), dtype=torch.long)
            for r, (_, p, c) in enumerate(chunk):
                ids[r, :len(p) + len(c)] = torch.tensor(p + c)
                attn[r, :len(p) + len(c)] = 1
            hidden = decoder(input_ids=ids, attention_mask=attn).last_hidden_state
            for r, (iid, p, c) in enumerate(chunk):
                # position t predicts token t+1: completion token j is predicted at len(p) - 1 + j
                logits = head(hidden[r, len(p) - 1:len(p) - 1 + len(c)]).float()
                target = torch.tensor(c)
                top2 = logits.topk(2, dim=-1)
                pick = top2.indices[:, 0]
                diff = (pick != target).nonzero()
                first = int(diff[0, 0]) if len(diff) else None
                upto = first if first is not None else len(c)
                gaps = (top2.values[:upto, 0] - top2.values[:upto, 1])
                v = GreedyVerdict(iid, first is None, len(c), first_divergence=first,
                                  min_gap=round(float(gaps.min()), 6) if upto else None)
                if first is not None:
                    v.gap_at_divergence = round(float(logits[first, pick[first]] - logits[first, target[first]]), 6)
                verdicts[iid] = v
            if progress:
                progress(len(chunk))
    finally:
        model.train(was_training)
    return [verdicts[k] for k in verdicts]


def summarize(verdicts: list[GreedyVerdict]) -> dict:
    """Counts for a report: identical, diverged (with the gaps where they diverged), not judged."""
    judged = [v for v in verdicts if v.reason is None]
    div = [v for v in judged if not v.identical]
    return {"n": len(verdicts), "identical": sum(v.identical for v in verdicts), "diverged": len(div),
            "not_judged": len(verdicts) - len(judged),
            "divergence_gaps": sorted(v.gap_at_divergence for v in div),
            "smallest_gap_on_identical": min((v.min_gap for v in judged if v.identical and v.min_gap is not None),
                                             default=None)}
