"""The Code-RL hard-prompt filter in miniature (RECIPE.md §4.1 row 6: the paper drops prompts that GPT-OSS-120B
solves on 8 of 8 samples). Here the judge of "too easy" is the stage's own input checkpoint: every distinct RL
prompt is sampled ``hard_prompt_filter_samples`` times at the stage's temperature/top-p and graded by its verifier;
prompts solved by all samples leave the pool (a prompt text with several records - different hidden tests - is
dropped only if all its graded samples pass). If a domain would be left empty the filter keeps its pool whole and
says so, rather than stopping the stage."""
from __future__ import annotations

import random

import torch

from recipe.config.stages import RLStageConfig
from recipe.rewards import verify_batch
from recipe.seeding import derive_seed
from recipe.train.context import StageContext
from recipe.train.rollout import generate, record_thinking, render_prompt


def drop_solved_prompts(ctx: StageContext, scfg: RLStageConfig, pools: dict[str, list[dict]]) -> tuple[dict, dict]:
    n = scfg.hard_prompt_filter_samples
    torch.manual_seed(derive_seed(ctx.seed, ctx.stage, "hard-prompt-filter"))
    rng = random.Random(derive_seed(ctx.seed, ctx.stage, "hard-prompt-filter-pick"))
    out, stats = {}, {}
    for d, recs in pools.items():
        by_prompt: dict[str, list[dict]] = {}
        for r in recs:
            by_prompt.setdefault(r["messages"][-1]["content"], []).append(r)
        keys = sorted(by_prompt)
        graded = [dict(rng.choice(by_prompt[k]), mode="thinking" if record_thinking(by_prompt[k][0], scfg.mode)
                       else "instruct") for k in keys]
        rows = [g for g in graded for _ in range(n)]
        texts = [render_prompt(ctx.tokenizer, r, r["mode"] == "thinking") for r in rows]
        ro = generate(ctx.model, ctx.tokenizer, texts, max_new_tokens=scfg.max_response_tokens,
                      temperature=scfg.temperature, top_p=scfg.top_p)
        scores = torch.tensor([v.score for v in verify_batch(rows, ro.texts)]).view(len(keys), n)
        finished = ro.finished_B.view(len(keys), n)
        solved = {k for k, s, f in zip(keys, scores, finished) if bool((s >= 1.0).all() and f.all())}
        kept = [r for r in recs if r["messages"][-1]["content"] not in solved]
        stats[d] = {"prompts": len(keys), "solved_all": len(solved), "samples": n,
                    "records_before": len(recs), "records_after": len(kept) if kept else len(recs),
                    "kept_whole_pool": not kept}
        out[d] = kept or recs
    return out, stats
