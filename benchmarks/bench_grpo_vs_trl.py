"""One GRPO step: our trainer vs TRL's GRPOTrainer; one MOPD step: ours vs TRL's on-policy distillation trainer
(``DistillationTrainer``, the successor of GKD in trl 1.16, fully on-policy, beta=1 = reverse KL); same tiny model,
batch and settings, in one process. Targets: both ratios TRL/ours >= 2.0.

Settings shared by both (the tiny profile's IF-RL stage): P prompts x G generations, max_new_tokens, T=1.0,
top_p=1.0, lr, AdamW, no KL (beta=0), token-level ("dapo") loss, group-scaled rewards, one optimizer update per
rollout batch (TRL: num_iterations=1, steps_per_generation=1). Our dynamic filtering is switched off so both train
on every response. TRL runs with bf16=False and gradient_checkpointing=False (its CPU-friendly settings,
DESIGN.md §8). Rewards: the same IF verifier; TRL decodes without special tokens, so its records are graded in
instruct mode (this changes the reward values, not the work per step).

    .venv/bin/python benchmarks/bench_grpo_vs_trl.py [--checkpoint runs/tiny-seed0/01_sft/checkpoint] [--steps 10] [--repeats 3]

MOPD settings shared by both (the tiny profile's mopd stage): 64 prompts x 1 sample over the MOPD domains,
the same rendered prompt texts (our chat template, each record's own mode), max_new_tokens, T=1.0, top_p=1.0,
lr (constant), AdamW betas, grad clip, one update per batch, one teacher. What cannot be matched: TRL takes a
single teacher (ours routes per domain; the benchmark gives every domain the same teacher so the work is equal);
TRL's loss is the full-vocabulary reverse KL on every token, ours the paper's sampled-token advantage
log pi_teacher - log pi_student with the importance mask (Eq. 3-4); TRL draws prompts from a shuffled dataset,
ours from the seeded domain mix (the same prompt-length distribution, not the same prompts).

Prints a table: seconds per step (median of the timed steps, after 1 warm-up) and the ratio TRL / ours, for each
of ``--repeats`` pairs (ours, then TRL, each on a fresh copy of the model), and the median ratio over the pairs: on
a shared 2-core VM the speed of the machine drifts by up to 1.5x between minutes, so one pair is a noisy ratio.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch


def build_model(checkpoint: str | None):
    from recipe.config import load_config
    from recipe.domains import build_tiny_splits, tokenizer_corpus
    from recipe.model import build_tiny, load_checkpoint
    cfg = load_config("tiny")
    splits = build_tiny_splits(cfg.domains.tiny, cfg.domains.names, cfg.run.seed)
    if checkpoint and Path(checkpoint).exists():
        model, tok = load_checkpoint(checkpoint)
        origin = checkpoint
    else:
        corpus = tokenizer_corpus(splits, cfg.domains.names, 500)
        model, tok = build_tiny(cfg.model, corpus, 0)
        origin = "untrained tiny model (pass --checkpoint for an SFT one)"
    return cfg, splits, model, tok, origin


def time_ours(cfg, splits, model, tok, steps: int, stage: str = "if_rl", teacher=None) -> list[float]:
    from recipe.runs import RunDir
    from recipe.train.context import StageContext
    from recipe.train.rl import rl_prompt_pools, rl_step
    scfg = getattr(cfg, stage).model_copy(update={"dynamic_filtering": False})
    run = RunDir(tempfile.mkdtemp(prefix="bench-ours-"))
    ctx = StageContext(run=run, stage=stage, cfg=cfg, model=model, tokenizer=tok, splits=splits, progress=False)
    opt = torch.optim.AdamW(model.parameters(), lr=scfg.lr, betas=tuple(scfg.adam_betas), weight_decay=0.0)
    pools = rl_prompt_pools(ctx, scfg)
    teachers = {d: teacher for d in scfg.domains} if teacher is not None else None
    times = []
    for step in range(steps + 1):
        t0 = time.perf_counter()
        rl_step(ctx, scfg, opt, step, pools, teachers=teachers)
        times.append(time.perf_counter() - t0)
    return times[1:]


def time_trl_distill(cfg, splits, model, teacher, tok, steps: int) -> list[float]:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import DistillationConfig, DistillationTrainer

    from recipe.domains import pool
    from recipe.train.rollout import record_thinking, render_prompt
    s = cfg.mopd
    texts = [render_prompt(tok, r, record_thinking(r, s.mode)) for d in s.domains
             for r in pool(splits[d]["train"], "rl")]
    args = DistillationConfig(
        output_dir=tempfile.mkdtemp(prefix="bench-trl-distill-"),
        per_device_train_batch_size=s.prompts_per_step * s.generations_per_prompt,
        max_completion_length=s.max_response_tokens, temperature=s.temperature, top_p=s.top_p, top_k=0, beta=1.0,
        learning_rate=s.lr, lr_scheduler_type="constant", adam_beta1=s.adam_betas[0], adam_beta2=s.adam_betas[1],
        weight_decay=0.0, max_grad_norm=s.grad_clip, bf16=False, gradient_checkpointing=False, use_cpu=True,
        max_steps=steps + 1, logging_steps=1000, save_strategy="no", report_to="none", seed=0,
        dataloader_num_workers=0)
    times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.t0 = time.perf_counter()

        def on_step_end(self, *a, **k):
            times.append(time.perf_counter() - self.t0)

    trainer = DistillationTrainer(model=model, teacher_model=teacher, args=args,
                                  train_dataset=Dataset.from_list([{"prompt": t} for t in texts]),
                                  processing_class=tok, callbacks=[Timer()])
    trainer.train()
    return times[1:]


def time_trl(cfg, splits, model, tok, steps: int) -> list[float]:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from recipe.rewards import verify_batch
    s = cfg.if_rl
    recs = splits["instruction_following"]["train"]
    ds = Dataset.from_list([{"prompt": r["messages"], "rid": i} for i, r in enumerate(recs)])

    def reward(prompts, completions, rid, **_):
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return [x.score for x in verify_batch([dict(recs[i], mode="instruct") for i in rid], texts)]

    batch = s.prompts_per_step * s.generations_per_prompt
    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="bench-trl-"), per_device_train_batch_size=batch,
        num_generations=s.generations_per_prompt, steps_per_generation=1,
        num_iterations=1, max_completion_length=s.max_response_tokens, temperature=s.temperature, top_p=s.top_p,
        beta=0.0, loss_type="dapo", scale_rewards="group", learning_rate=s.lr, lr_scheduler_type="constant",
        adam_beta1=s.adam_betas[0], adam_beta2=s.adam_betas[1], weight_decay=0.0, max_grad_norm=s.grad_clip,
        bf16=False, gradient_checkpointing=False, use_cpu=True, max_steps=steps + 1, logging_steps=1000,
        save_strategy="no", report_to="none", seed=0, chat_template_kwargs={"enable_thinking": True},
        dataloader_num_workers=0)
    times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.t0 = time.perf_counter()

        def on_step_end(self, *a, **k):
            times.append(time.perf_counter() - self.t0)

    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=ds, processing_class=tok,
                          callbacks=[Timer()])
    trainer.train()
    return times[1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default="runs/tiny-seed0/01_sft/checkpoint")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=["all", "grpo", "mopd"], default="all")
    ap.add_argument("--repeats", type=int, default=3, help="pairs (ours, TRL) timed; the verdict uses their median ratio")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg, splits, model, tok, origin = build_model(a.checkpoint)
    import copy
    rows = []
    for rep in range(a.repeats):
        if a.only in ("all", "grpo"):
            ours = time_ours(cfg, splits, copy.deepcopy(model), tok, a.steps)
            trl = time_trl(cfg, splits, copy.deepcopy(model), tok, a.steps)
            s = cfg.if_rl
            rows.append((f"GRPO ({s.prompts_per_step} prompts x {s.generations_per_prompt}, max "
                         f"{s.max_response_tokens} new tokens)", "GRPOTrainer", rep, ours, trl))
        if a.only in ("all", "mopd"):
            teacher = copy.deepcopy(model).eval()
            ours = time_ours(cfg, splits, copy.deepcopy(model), tok, a.steps, stage="mopd", teacher=teacher)
            trl = time_trl_distill(cfg, splits, copy.deepcopy(model), copy.deepcopy(model).eval(), tok, a.steps)
            s = cfg.mopd
            rows.append((f"MOPD ({s.prompts_per_step} prompts x {s.generations_per_prompt}, max "
                         f"{s.max_response_tokens} new tokens)", "DistillationTrainer (beta=1)", rep, ours, trl))
    print(f"\n{a.threads} torch thread(s); model: {origin}; {a.repeats} pair(s) of {a.steps} timed steps each")
    print(f"{'step':<44} {'pair':>4} {'trainer':<28} {'median s/step':>14} {'min':>8} {'max':>8}  {'TRL/ours':>8}")
    ratios: dict[str, list[float]] = {}
    for title, trl_name, rep, ours, trl in sorted(rows, key=lambda r: (r[0], r[2])):
        mo, mt = statistics.median(ours), statistics.median(trl)
        ratios.setdefault(title, []).append(mt / mo)
        print(f"{title:<44} {rep:>4} {'ours':<28} {mo:>14.3f} {min(ours):>8.3f} {max(ours):>8.3f}")
        print(f"{'':<44} {rep:>4} {'TRL ' + trl_name:<28} {mt:>14.3f} {min(trl):>8.3f} {max(trl):>8.3f}  {mt / mo:>8.2f}")
    for title, rs in ratios.items():
        med = statistics.median(rs)
        print(f"{title}: ratio TRL/ours, median of {len(rs)} pair(s) = {med:.2f} (pairs: "
              f"{', '.join(f'{r:.2f}' for r in rs)})  target >= 2.0: {'MET' if med >= 2.0 else 'NOT MET'}")


if __name__ == "__main__":
    main()
