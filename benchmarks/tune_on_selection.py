"""Choose a stage setting on the SELECTION split, never on the report split: re-run one stage from its input
checkpoint of finished runs (one per seed) with each candidate setting, score on the selection split, and print
the pooled result. Nothing is written into the runs (each trial trains in a temporary directory).

    .venv/bin/python benchmarks/tune_on_selection.py --runs-dir D --seeds 0 1 2 --stage mopd \
        "mopd.domain_weights.chat=1.0;mopd.domain_weights.instruction_following=1.5" "mopd.steps=50"

- ``--stage mopd``: the student (the multi-domain RL checkpoint) trains with the run's own teachers
  (``mopd.teacher_routing`` resolved as the stage does); per MOPD domain it prints the student's score and the
  teacher's 95% interval, pooled over seeds (n = selection prompts x seeds), and whether the student is inside or
  above it (target (e) of recipe.reporting.evidence).
- ``--stage rlhf``: main-line RLHF from the MOPD checkpoint (KL to it); the paired change of every domain, pooled
  over seeds (target (c) for chat, and what it costs the others).
- ``--stage rlhf_branch``: the RLHF teacher, RLHF from the SFT checkpoint (KL to it); the same paired changes (a
  chat teacher that does not beat its student's input on chat pulls MOPD's chat down, target (d)).
- ``--stage if_rl`` / ``--stage multi_domain_rl``: the stage from its input checkpoint; the same paired changes of
  every domain (target (j): the domains the stage does not train), plus one pooled line over the stage's own
  domains (targets (a) and (b): MCQA + tool calls pooled).

One setting is chosen for all seeds; the tiny profile's comments cite the run of this script behind each value.
"""
from __future__ import annotations

import argparse
import copy
import os
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs-dir", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--stage", choices=["if_rl", "multi_domain_rl", "mopd", "rlhf", "rlhf_branch"], required=True)
    ap.add_argument("settings", nargs="+", help='";"-separated key=value overrides per candidate ("" = the profile)')
    a = ap.parse_args()
    os.environ["RECIPE_RUNS_DIR"] = str(Path(a.runs_dir).resolve())
    import torch

    from recipe.config import load_config
    from recipe.validation.domain_validation import validate_samples
    from recipe.model import load_checkpoint
    from recipe.domains.data_phase import load_splits
    from recipe.runs.teachers import resolve_teachers
    from recipe.runs import RunDir
    from recipe.stats.intervals import item_means, mean_ci, paired_bootstrap_delta
    from recipe.train.context import StageContext
    from recipe.train.rl import train_rl

    teacher_models: dict = {}   # checkpoint path -> (model, tokenizer)
    teacher_scores: dict = {}   # (seed, domain, checkpoint) -> that teacher's selection-split item means
    for setting in a.settings:
        overrides = [s for s in setting.split(";") if s.strip()]
        student: dict[str, dict] = {}
        before: dict[str, dict] = {}
        teacher: dict[str, dict] = {}
        for seed in a.seeds:
            cfg = load_config("tiny", [f"run.seed={seed}", *overrides])
            torch.set_num_threads(cfg.run.torch_threads)
            run = RunDir.for_id(f"tiny-seed{seed}")
            splits = load_splits(run, cfg)
            scfg = cfg.stage(a.stage)
            # MOPD's domains; for the RL stages every domain, since their cost lands outside MOPD's (code, long
            # context, SWE: target (j), what multi-domain RL does to the domains it does not train)
            doms = list(cfg.mopd.domains) if a.stage == "mopd" else list(cfg.domains.names)

            def scores(model, tok, domains):
                rows = validate_samples(model, tok, splits, domains, cfg.evaluation, split="select", seed=seed)
                return {d: {f"{seed}:{k}": v for k, v in item_means(r for r in rows if r["domain"] == d).items()}
                        for d in domains}
            model, tok = load_checkpoint(run.checkpoint_dir(cfg.input_stage(a.stage)))
            teachers, ref = None, None
            if a.stage == "mopd":
                teachers = {}
                for d, t in resolve_teachers(run, cfg.mopd.teacher_routing, doms).items():
                    path = run.resolve_path(t["checkpoint"])  # run files hold paths relative to the run
                    if path not in teacher_models:  # one load per checkpoint (IF, MCQA, tools share one)
                        teacher_models[path] = load_checkpoint(path)
                    teachers[d], ttok = teacher_models[path]
                    key = (seed, d, path)  # a teacher is scored once, not once per setting
                    if key not in teacher_scores:
                        teacher_scores[key] = scores(teachers[d], ttok, [d])[d]
                    teacher.setdefault(d, {}).update(teacher_scores[key])
            else:
                for d, v in scores(model, tok, doms).items():
                    before.setdefault(d, {}).update(v)
                ref = copy.deepcopy(model).eval() if scfg.kl_coef > 0 else None
            ctx = StageContext(run=RunDir(tempfile.mkdtemp(prefix=f"tune-{a.stage}-")), stage=a.stage, cfg=cfg,
                               model=model, tokenizer=tok, splits=splits, progress=False)
            train_rl(ctx, scfg, teachers=teachers, ref_model=ref)
            for d, v in scores(model, tok, doms).items():
                student.setdefault(d, {}).update(v)
        print(f"\nsetting: {setting or '(profile)'}  seeds {a.seeds}, selection split, 95% CI, n = prompts x seeds")
        for d in student:
            s = mean_ci(list(student[d].values()), scale=100.0, bounds=(0.0, 100.0))
            if a.stage == "mopd":
                t = mean_ci(list(teacher[d].values()), scale=100.0, bounds=(0.0, 100.0))
                verdict = "inside or above" if s.score >= t.ci_low else "BELOW"
                print(f"  {d:<24} student {s.score:5.1f}   teacher {t.score:5.1f} [{t.ci_low:5.1f}, {t.ci_high:5.1f}]"
                      f"  n={s.n}  {verdict}")
            else:
                e = paired_bootstrap_delta(student[d], before[d], scale=100.0)
                print(f"  {d:<24} after {s.score:5.1f}   change {e.score:+5.1f} [{e.ci_low:+5.1f}, {e.ci_high:+5.1f}]"
                      f"  n={e.n}")
        own = [d for d in scfg.domains if d in student]
        if a.stage in ("if_rl", "multi_domain_rl") and own:
            e = paired_bootstrap_delta({f"{d}:{k}": v for d in own for k, v in student[d].items()},
                                       {f"{d}:{k}": v for d in own for k, v in before[d].items()}, scale=100.0)
            print(f"  {'+'.join(own):<24} pooled      change {e.score:+5.1f} [{e.ci_low:+5.1f}, {e.ci_high:+5.1f}]"
                  f"  n={e.n}")


if __name__ == "__main__":
    main()
