"""What MOPD does to each domain, seen from the answers: a diagnostic, nothing is chosen from it.

For each seed's finished run (through ``rlhf_branch``), the student (the multi-domain RL checkpoint, or one
re-trained from the IF-RL checkpoint with ``--student`` overrides) is distilled by MOPD with the run's teachers (or
the ``--setting`` overrides, e.g. a routing), in a temporary directory. Per MOPD domain it prints, before and after
and for the teacher, on the selection split: the score, the mean answer length in tokens, the share of answers cut at
the evaluation cap, and for MCQA the share with a ``\\boxed{}`` answer; and from the stage's step metrics (first and
last ten steps): the sampled reverse KL, the teacher's log-prob per token, the importance mask's dropped share and
the advantage on each answer's last token.

    .venv/bin/python benchmarks/probe_mopd_domains.py --runs-dir D --seeds 0 1 2 \\
        --student "multi_domain_rl.lr=3e-4" --setting "mopd.teacher_routing.mcqa=stage:if_rl"
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path


def answer_stats(rows: list[dict], tok, cap: int) -> dict:
    """Mean tokens, share cut at ``cap`` (the answer used every token it was given) and share with a boxed answer."""
    lens = [len(tok.encode(r["response"], add_special_tokens=False)) for r in rows]
    n = max(1, len(rows))
    return {"score": 100.0 * sum(r["reward"] for r in rows) / n, "tokens": sum(lens) / n,
            "at_cap": 100.0 * sum(x >= cap for x in lens) / n,
            "boxed": 100.0 * sum("\\boxed{" in r["response"] for r in rows) / n}


def step_means(metrics_path: Path, domains: list[str]) -> dict[str, dict[str, tuple[float, float]]]:
    """{domain: {metric: (mean over the first ten steps, mean over the last ten)}} from metrics.jsonl."""
    steps = [json.loads(x) for x in metrics_path.read_text().splitlines() if x.strip()]
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for d in domains:
        for what in ("reverse_kl", "teacher_logprob", "masked_frac", "last_token_adv"):
            vals = [s[f"{what}/{d}"] for s in steps if f"{what}/{d}" in s]
            if vals:
                head, tail = vals[:10], vals[-10:]
                out.setdefault(d, {})[what] = (sum(head) / len(head), sum(tail) / len(tail))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs-dir", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--student", default="", help='";"-separated overrides: re-train multi-domain RL from IF-RL')
    ap.add_argument("--setting", default="", help='";"-separated overrides for MOPD (e.g. a teacher routing)')
    ap.add_argument("--split", default="select", choices=["select", "val"])
    a = ap.parse_args()
    os.environ["RECIPE_RUNS_DIR"] = str(Path(a.runs_dir).resolve())
    import torch

    from recipe.config import load_config
    from recipe.domains.data_phase import load_splits
    from recipe.model import load_checkpoint
    from recipe.runs import RunDir
    from recipe.runs.teachers import resolve_teachers
    from recipe.train.context import StageContext
    from recipe.train.rl import train_rl
    from recipe.validation.domain_validation import validate_samples

    student_ov = [s for s in a.student.split(";") if s.strip()]
    mopd_ov = [s for s in a.setting.split(";") if s.strip()]
    for seed in a.seeds:
        cfg = load_config("tiny", [f"run.seed={seed}", *student_ov, *mopd_ov])
        torch.set_num_threads(cfg.run.torch_threads)
        run = RunDir.for_id(f"tiny-seed{seed}")
        splits = load_splits(run, cfg)
        doms = list(cfg.mopd.domains)

        def answers(model, tok, domains):
            rows = validate_samples(model, tok, splits, domains, cfg.evaluation, split=a.split, seed=seed)
            return {d: answer_stats([r for r in rows if r["domain"] == d], tok, cfg.evaluation.cap_for(d))
                    for d in domains}

        if student_ov:
            model, tok = load_checkpoint(run.checkpoint_dir("if_rl"))
            ctx = StageContext(run=RunDir(tempfile.mkdtemp(prefix="probe-mdrl-")), stage="multi_domain_rl",
                               cfg=cfg, model=model, tokenizer=tok, splits=splits, progress=False)
            train_rl(ctx, cfg.stage("multi_domain_rl"), ref_model=None if cfg.multi_domain_rl.kl_coef == 0 else
                     load_checkpoint(run.checkpoint_dir("if_rl"))[0].eval())
        else:
            model, tok = load_checkpoint(run.checkpoint_dir("multi_domain_rl"))
        teachers, teacher_stats, loaded = {}, {}, {}
        for d, t in resolve_teachers(run, cfg.mopd.teacher_routing, doms).items():
            path = run.resolve_path(t["checkpoint"])
            if path not in loaded:
                loaded[path] = load_checkpoint(path)
            teachers[d] = loaded[path][0]
            teacher_stats[d] = {"name": t.get("candidate") or t["stage"],
                                **answers(loaded[path][0], loaded[path][1], [d])[d]}
        before = answers(model, tok, doms)
        tmp = RunDir(tempfile.mkdtemp(prefix="probe-mopd-"))
        ctx = StageContext(run=tmp, stage="mopd", cfg=cfg, model=model, tokenizer=tok, splits=splits,
                           progress=False)
        train_rl(ctx, cfg.mopd, teachers=teachers)
        after = answers(model, tok, doms)
        steps = step_means(tmp.metrics_path("mopd"), doms)
        print(f"\nseed {seed}  student {'re-trained: ' + a.student if student_ov else 'multi_domain_rl'}"
              f"  mopd {a.setting or '(profile)'}  split {a.split}")
        print(f"  {'domain':<22}{'teacher':<18}{'score b/a/T':>20}{'tokens b/a/T':>20}{'at cap % b/a/T':>20}"
              f"{'boxed % b/a/T':>20}")
        for d in doms:
            b, f, t = before[d], after[d], teacher_stats[d]
            cols = [f"{b[k]:5.1f}/{f[k]:5.1f}/{t[k]:5.1f}" for k in ("score", "tokens", "at_cap", "boxed")]
            print(f"  {d:<22}{t['name'][:17]:<18}" + "".join(f"{c:>20}" for c in cols))
        print(f"  step metrics, first ten steps -> last ten: reverse KL | teacher log-prob/token | masked | "
              f"last-token advantage")
        for d in doms:
            m = steps.get(d, {})
            print(f"  {d:<22}" + " | ".join(f"{m[k][0]:+.3f} -> {m[k][1]:+.3f}" if k in m else "-"
                                             for k in ("reverse_kl", "teacher_logprob", "masked_frac",
                                                       "last_token_adv")))


if __name__ == "__main__":
    main()
