"""The capacity study: does the miniature forget because the model is too small to hold nine skills at once?

The same tiny profile is run at several sizes of the same architecture (NemotronH: the hybrid Mamba-2 / MoE /
attention pattern of the paper's model, scaled in width and depth), several seeds each. For each size it reports:
- every claim of ``recipe.reporting.evidence.TARGETS``, pooled over the seeds;
- a forgetting index per domain: the score of the domain's best checkpoint of the cascade minus the final
  checkpoint's, a paired difference over the same report prompts pooled over the seeds. The best checkpoint is
  picked on those same prompts, so the index leans high: it is an upper bound on what the cascade forgot;
- SFT's own score per domain (what the later stages start from);
- each run's wall time.
``benchmarks/bench_capacity.py`` runs the study and writes the table and the plot (docs/EVIDENCE.md shows them).
"""
from __future__ import annotations

from dataclasses import dataclass

from recipe.config.schema import STAGE_PLAN
from recipe.runs.layout import RunDir
from recipe.stats import item_means, mean_ci, paired_bootstrap_delta
from recipe.validation.samples import read_samples, samples_path

FINAL_STAGE = STAGE_PLAN[-1]


@dataclass(frozen=True)
class ModelSize:
    """A NemotronH size: ``width`` = hidden size (attention head_dim, Mamba heads and expert widths scale with it,
    as in the tiny profile's 96: head_dim 24, 12 Mamba heads of 16, experts 96, shared expert 192); ``depth`` =
    repeats of the tiny profile's layer pattern (Mamba, MoE, attention, MoE)."""
    width: int
    depth: int = 1

    @property
    def name(self) -> str:
        return f"w{self.width}" + (f"x{self.depth}" if self.depth > 1 else "")

    def overrides(self) -> list[str]:
        w = self.width
        if w % 16:
            raise ValueError(f"width {w}: must be a multiple of 16 (4 attention heads, Mamba heads of 16 in 2 groups)")
        a = "model.architecture."
        return [f"{a}hidden_size={w}", f"{a}head_dim={w // 4}", f"{a}mamba_num_heads={w // 8}",
                f"{a}moe_intermediate_size={w}", f"{a}moe_shared_expert_intermediate_size={2 * w}",
                f"{a}hybrid_override_pattern={'ME*E' * self.depth}"]

    @classmethod
    def parse(cls, text: str) -> "ModelSize":
        """``w96`` or ``w64x2`` (width, optional depth)."""
        body = text.removeprefix("w")
        width, _, depth = body.partition("x")
        try:
            return cls(int(width), int(depth) if depth else 1)
        except ValueError:
            raise ValueError(f"size {text!r}: expected w<width>[x<depth>], e.g. w64 or w96x2") from None


def _report_means(run: RunDir, stage: str) -> dict[str, dict[str, float]]:
    """{domain: {item: mean reward}} of a stage's final checkpoint on the report split."""
    rows = read_samples(samples_path(run, stage, "final", "val"))
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["domain"], []).append(r)
    return {d: item_means(rs) for d, rs in out.items()}


def forgetting_rows(runs: list[RunDir]) -> list[dict]:
    """Per domain: best stage's score - final stage's score (paired, pooled over runs), and which stage was best."""
    per_dom: dict[str, dict] = {}
    for run in runs:
        means = {s: _report_means(run, s) for s in STAGE_PLAN if run.is_done(s)}
        if FINAL_STAGE not in means:
            raise FileNotFoundError(f"run {run.run_id}: {FINAL_STAGE} is not done")
        for d, final in means[FINAL_STAGE].items():
            scored = {s: m[d] for s, m in means.items() if d in m}
            best = max(scored, key=lambda s: sum(scored[s].values()) / len(scored[s]))
            slot = per_dom.setdefault(d, {"best": {}, "final": {}, "stages": []})
            slot["stages"].append(best)
            for k, v in scored[best].items():
                slot["best"][f"{run.run_id}/{k}"] = v
            for k, v in final.items():
                slot["final"][f"{run.run_id}/{k}"] = v
    rows = []
    for d, s in per_dom.items():
        e = paired_bootstrap_delta(s["best"], s["final"], scale=100.0)
        rows.append({"domain": d, **e.as_dict(), "best_stages": s["stages"]})
    return rows


def sft_rows(runs: list[RunDir]) -> list[dict]:
    """SFT's score per domain on the report split, pooled over runs (n = prompts x runs)."""
    pooled: dict[str, list[float]] = {}
    for run in runs:
        for d, m in _report_means(run, "sft").items():
            pooled.setdefault(d, []).extend(m.values())
    return [{"domain": d, **mean_ci(v, scale=100.0, bounds=(0.0, 100.0)).as_dict()} for d, v in pooled.items()]


def below_sft_rows(runs: list[RunDir]) -> list[dict]:
    """Per domain: final - SFT (paired, pooled). The profile's bar: no domain ends below SFT by more than its CI,
    except instruction following after RLHF (the paper's own regression, RECIPE.md)."""
    after, before = {}, {}
    for run in runs:
        fin, sft = _report_means(run, FINAL_STAGE), _report_means(run, "sft")
        for d in fin:
            for k, v in fin[d].items():
                after.setdefault(d, {})[f"{run.run_id}/{k}"] = v
            for k, v in sft.get(d, {}).items():
                before.setdefault(d, {})[f"{run.run_id}/{k}"] = v
    rows = []
    for d in after:
        e = paired_bootstrap_delta(after[d], before[d], scale=100.0)
        rows.append({"domain": d, **e.as_dict(), "below_sft": e.ci_high < 0})
    return rows


def study_rows(runs_by_size: dict[str, list[RunDir]], walls: dict[str, list[float]] | None = None) -> dict:
    """The study as one JSON-able object: per size its parameter count, claims, forgetting, SFT scores, walls."""
    from recipe.reporting.evidence import evidence_rows
    out = {}
    for name, runs in runs_by_size.items():
        out[name] = {"runs": [r.run_id for r in runs], "parameters": _parameters(runs[0]),
                     "claims": evidence_rows(runs), "forgetting": forgetting_rows(runs), "sft": sft_rows(runs),
                     "final_vs_sft": below_sft_rows(runs), "wall_s": (walls or {}).get(name, [])}
    return out


def _parameters(run: RunDir) -> int:
    """Parameters of the run's SFT checkpoint (every size shares the tokenizer, so they differ by the model only)."""
    from safetensors import safe_open
    total = 0
    with safe_open(str(run.checkpoint_dir("sft") / "model.safetensors"), "pt") as f:
        for k in f.keys():
            n = 1
            for x in f.get_slice(k).get_shape():
                n *= x
            total += n
    return total
