"""Diagnostic: run one late RL stage from ANOTHER checkpoint of finished runs, to tell "the stage cannot learn" from
"its input has already forgotten the skill". Nothing is written into the runs (training happens in a temporary
directory); nothing is tuned (the profile's settings, one for all seeds).

    .venv/bin/python benchmarks/stage_from_checkpoint.py --runs-dir D --seeds 0 1 2 --stage swe_agentless --init sft

Stages: ``code_rl``, ``long_context_rl``, ``swe_agentless`` (the agentless phase of ``swe_rl``), ``swe_agentic``.
Prints, per seed and pooled, the stage's own domain on the report split before and after (avg@k, 95% CI) with
the paired bootstrap delta, and how many steps made an update.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs-dir", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--stage", choices=["code_rl", "long_context_rl", "swe_agentless", "swe_agentic"], required=True)
    ap.add_argument("--init", required=True, help="stage whose checkpoint the trial starts from, e.g. sft")
    a = ap.parse_args()
    os.environ["RECIPE_RUNS_DIR"] = str(Path(a.runs_dir).resolve())
    import torch

    from recipe.config import load_config
    from recipe.validation.domain_validation import validate_samples
    from recipe.model import load_checkpoint
    from recipe.domains.data_phase import load_splits
    from recipe.runs import RunDir
    from recipe.stats.intervals import item_means, mean_ci, paired_bootstrap_delta
    from recipe.train.context import StageContext
    from recipe.train.rl import train_rl

    pooled_before: dict[str, float] = {}
    pooled_after: dict[str, float] = {}
    for seed in a.seeds:
        cfg = load_config("tiny", [f"run.seed={seed}"])
        torch.set_num_threads(cfg.run.torch_threads)
        run = RunDir.for_id(f"tiny-seed{seed}")
        splits = load_splits(run, cfg)
        scfg = {"swe_agentless": cfg.swe_rl.agentless, "swe_agentic": cfg.swe_rl.agentic}.get(a.stage) \
            or cfg.stage(a.stage)
        dom = scfg.domains[0]
        model, tok = load_checkpoint(run.checkpoint_dir(a.init))

        def scores():
            rows = validate_samples(model, tok, splits, [dom], cfg.evaluation, split="val", seed=seed)
            return item_means(rows)
        before = scores()
        tmp = RunDir(tempfile.mkdtemp(prefix="stage-from-"))
        ctx = StageContext(run=tmp, stage="swe_rl" if a.stage.startswith("swe") else a.stage, cfg=cfg, model=model,
                           tokenizer=tok, splits=splits, progress=False)
        summary = train_rl(ctx, scfg)
        shutil.rmtree(tmp.path, ignore_errors=True)
        after = scores()
        b, f = (mean_ci(list(s.values()), scale=100.0, bounds=(0.0, 100.0)) for s in (before, after))
        d = paired_bootstrap_delta(after, before, scale=100.0)
        print(f"seed {seed}: {dom} {b.score:.1f} [{b.ci_low:.1f}, {b.ci_high:.1f}] -> {f.score:.1f} [{f.ci_low:.1f}, "
              f"{f.ci_high:.1f}]  delta {d.score:+.1f} [{d.ci_low:+.1f}, {d.ci_high:+.1f}]  n={d.n}  "
              f"updates {summary.get('updates')}/{scfg.steps}", flush=True)
        pooled_before.update({f"{seed}:{k}": v for k, v in before.items()})
        pooled_after.update({f"{seed}:{k}": v for k, v in after.items()})
    d = paired_bootstrap_delta(pooled_after, pooled_before, scale=100.0)
    print(f"pooled over seeds {a.seeds}: {a.stage} from {a.init}, delta {d.score:+.1f} [{d.ci_low:+.1f}, "
          f"{d.ci_high:+.1f}]  n={d.n}  ({'CI excludes 0' if d.ci_low > 0 or d.ci_high < 0 else 'not shown'})")


if __name__ == "__main__":
    main()
