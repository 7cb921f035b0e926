"""SFT: cross-entropy on assistant tokens only (paper §3.1; RECIPE.md §3).

Each step draws ``global_batch`` examples (seeded per step), renders each in thinking or instruct mode
(``mode_mix``) with the chat template, and trains on the assistant turn (reasoning, answer, tool calls and
``<|im_end|>``). The prompt is tokenized separately from the answer, exactly as at generation time.
At paper scale, packing into 256K sequences happens in NeMo-RL (cluster backend); the local loop does not pack: it
runs each batch in length buckets (``recipe.train.rollout.length_buckets``), each trimmed to its own columns.
"""
from __future__ import annotations

import math
import random
import time

import torch

from recipe.config.stages import SFTConfig
from recipe.domains import pool, to_sft_messages
from recipe.model.chat_render import apply_template
from recipe.train.context import StageContext
from recipe.train.device import model_device
from recipe.train.micro_batches import row_chunks, trim_columns
from recipe.train.optimizer import adamw
from recipe.train.progress import progress_bar
from recipe.train.rollout import render_prompt, sequence_logprobs
from recipe.train.schedule import lr_at
from recipe.train.state import SaveClock, resume_step, save_state, step_seed


class SFTExamples:
    """Tokenized (prompt ids, answer ids) per (record, mode), built lazily and cached."""

    def __init__(self, tokenizer, records: list[dict], max_len: int):
        self.tok, self.records, self.max_len, self._cache = tokenizer, records, max_len, {}

    def get_many(self, keys: list[tuple[int, bool]]) -> list[tuple[list[int], list[int]]]:
        """(prompt ids, answer ids) per (record index, thinking); what is not cached yet is tokenized in one call
        (the fast tokenizer's per-call overhead was ~2 s of the tiny SFT stage when it ran once per text)."""
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        texts: list[str] = []
        for i, thinking in todo:
            rec = self.records[i]
            prompt = render_prompt(self.tok, rec, thinking)
            full = apply_template(self.tok, to_sft_messages(rec, thinking), tools=rec.get("tools"),
                                  enable_thinking=thinking)
            if not full.startswith(prompt):
                raise ValueError(f"chat template: prompt of {rec['id']} is not a prefix of the full conversation")
            answer = full[len(prompt):]
            texts += [prompt, answer[: answer.rindex(self.tok.eos_token) + len(self.tok.eos_token)]]
        if todo:
            ids = self.tok(texts, add_special_tokens=False)["input_ids"]
            for j, key in enumerate(todo):
                self._cache[key] = (ids[2 * j], ids[2 * j + 1])
        return [self._cache[k] for k in keys]

    def collate(self, items: list[tuple[list[int], list[int]]], pad_id: int):
        seqs = [(p + a)[: self.max_len] for p, a in items]
        S = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), S), pad_id, dtype=torch.long)
        attn = torch.zeros(len(seqs), S, dtype=torch.long)
        mask = torch.zeros(len(seqs), S)
        for b, ((p, a), s) in enumerate(zip(items, seqs)):
            ids[b, : len(s)] = torch.tensor(s)
            attn[b, : len(s)] = 1
            mask[b, len(p): len(s)] = 1.0
        return ids, attn, mask


def sft_records(train: list[dict], fraction: float | None = None) -> list[dict]:
    """A domain's SFT pool: its ``sft``-pool training records, ``fraction`` times over if set (the first ones, rounded
    up, for the part below 1), each with the prompt SFT trains on (``metadata.sft_messages`` where the generator gives
    one: a long-context document cut short, ``recipe.domains.long_context_domain``)."""
    records = pool(train, "sft")
    if fraction is not None:
        whole, part = divmod(fraction, 1.0)
        records = records * int(whole) + records[: math.ceil(part * len(records))]
    return [{**r, "messages": r["metadata"]["sft_messages"]} if r.get("metadata", {}).get("sft_messages") else r
            for r in records]


def train_sft(ctx: StageContext, scfg: SFTConfig) -> dict:
    """The SFT loop. On CUDA nothing in a step waits for the device: the batch goes over without a sync, the log-probs
    stay on the device (``sequence_logprobs(on_device=True)``), and the loss and gradient norm are read back every
    ``log_every`` steps, before a state save and at the end (one metrics row a step still); on the CPU every step."""
    model, tok = ctx.model, ctx.tokenizer
    records = [r for d in ctx.cfg.domains.names for r in sft_records(ctx.splits[d]["train"], scfg.domain_fraction.get(d))]
    data = SFTExamples(tok, records, scfg.max_seq_len)
    p_think = scfg.mode_mix.get("thinking", 0.0) / max(1e-9, sum(scfg.mode_mix.values()))
    opt = adamw(model.parameters(), scfg, ctx.cfg.run.fused_optimizer)
    start = resume_step(ctx.state_dir, model, opt, ctx.stage, scfg.steps)
    ctx.run.truncate_metrics(ctx.stage, start)
    total = scfg.planned_steps or scfg.steps
    dev = model_device(model)
    micro = ctx.cfg.run.train_micro_batch_size
    read_every = scfg.log_every if dev.type == "cuda" else 1
    clock = SaveClock(scfg.save_every, ctx.cfg.run.state_save_every_s)
    pending: list[tuple[dict, torch.Tensor, torch.Tensor]] = []   # (row, loss, grad norm) not read back yet

    def flush() -> None:
        if not pending:
            return
        values = torch.stack([torch.stack([loss, gn]) for _, loss, gn in pending]).tolist()  # one device read
        for (row, _, _), (loss, gn) in zip(pending, values):
            ctx.run.append_metrics(ctx.stage, {**row, "grad_norm": gn, "loss": loss})
        bar.set_postfix(loss=f"{values[-1][0]:.3f}")
        pending.clear()

    model.train()
    bar = progress_bar(scfg.steps, start, f"{ctx.stage}", ctx.progress)
    for step in range(start, scfg.steps):
        t0 = time.perf_counter()
        rng = random.Random(step_seed(ctx.seed, ctx.stage, step))
        batch = data.get_many([(rng.randrange(len(records)), rng.random() < p_think) for _ in range(scfg.global_batch)])
        lr = lr_at(step, scfg, total)
        for g in opt.param_groups:
            g["lr"] = lr
        # One padded batch; sequence_logprobs runs it in trimmed length buckets (same loss and gradient).
        ids, attn, mask = data.collate(batch, tok.pad_token_id)
        n_tokens = int(mask.sum())
        loss = None
        # run.train_micro_batch_size rows a forward/backward, each divided by the whole batch's tokens: the gradient
        # of one pass (recipe.train.micro_batches); sft_loss's token mean, without its metrics' host reads
        for rows in row_chunks(len(batch), micro):
            c_ids, c_attn, c_mask = trim_columns([ids[rows], attn[rows], mask[rows]], attn[rows])
            lp = sequence_logprobs(model, c_ids, c_attn, c_mask, on_device=True)
            part = -(lp * c_mask.to(lp.device, non_blocking=True)).sum() / max(1, n_tokens)
            part.backward()
            loss = part.detach() if loss is None else loss + part.detach()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), scfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        pending.append(({"step": step, "lr": lr, "time_s": time.perf_counter() - t0, "tokens": n_tokens},
                        loss.detach().float(), gn.detach().float()))
        bar.update(1)
        save = clock.due(step + 1, scfg.steps)
        if save or (step + 1 - start) % read_every == 0 or step + 1 == scfg.steps:
            flush()
        if save:
            save_state(ctx.state_dir, model, opt, step + 1)
            clock.saved()
    flush()
    bar.close()
    model.eval()
    rows = ctx.run.read_metrics(ctx.stage)
    return {"steps": scfg.steps, "final_loss": rows[-1]["loss"] if rows else None}
