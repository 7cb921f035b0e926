"""Evidence across seeds: each claim of the cascade as a *target*, pooled over several runs (one per seed) with a
95% interval (``benchmarks/bench_evidence.py`` prints the table; README.md quotes it).

A ``DeltaTarget`` pools the paired per-prompt differences stage - input (report split, same prompts and sampling
seeds within a run) over every run and every named domain, and holds when the paired bootstrap interval of the
mean difference excludes 0 from above (ci_low > 0). A ``TeacherMatchTarget`` holds per teacher domain when the
student's pooled score is within the teacher's pooled 95% interval or above it.

``TARGETS`` is a list: a new stage adds its claim by appending a target (e.g. long-context RL raises
long_context), nothing else changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recipe.runs.layout import RunDir
from recipe.runs.teachers import read_teachers
from recipe.stats import item_means, mean_ci, paired_bootstrap_delta
from recipe.validation.samples import read_samples, samples_path


def stage_input_of(run: RunDir, stage: str) -> str | None:
    """The done stage whose checkpoint ``stage`` started from (None when it has no input checkpoint)."""
    m = run.read_manifest(stage) or {}
    path = (m.get("inputs") or {}).get("init_checkpoint", {}).get("path")
    if not path:
        return None
    # by the stage folder's name (<NN>_<stage>/checkpoint), so a moved or copied run still finds its inputs
    folder = Path(path).parent.name
    return next((s for s in run.done_stages() if run.stage_dir(s).name == folder), None)


def _stage_input(run: RunDir, stage: str) -> str:
    got = stage_input_of(run, stage)
    if got is None:
        raise FileNotFoundError(f"run {run.run_id}: stage {stage!r} is not done (or has no input checkpoint)")
    return got


def _means(run: RunDir, stage: str, domain: str, checkpoint: str = "final") -> dict[str, float]:
    rows = read_samples(samples_path(run, stage, checkpoint, "val"))
    return item_means(r for r in rows if r["domain"] == domain)


@dataclass(frozen=True)
class DeltaTarget:
    key: str
    claim: str
    stage: str
    domains: tuple[str, ...] | None = None   # None: every domain the stage was validated on (an average)

    def evaluate(self, runs: list[RunDir]) -> list[dict]:
        after, before, doms_seen = {}, {}, set()
        for run in runs:
            inp = _stage_input(run, self.stage)
            doms = self.domains or tuple(dict.fromkeys(r["domain"] for r in
                                                       read_samples(samples_path(run, self.stage, "final", "val"))))
            for d in doms:
                doms_seen.add(d)
                for k, v in _means(run, self.stage, d).items():
                    after[(run.run_id, d, k)] = v
                for k, v in _means(run, inp, d).items():
                    before[(run.run_id, d, k)] = v
        if not set(after) & set(before):
            raise LookupError(f"{self.stage} and its input share no report-split prompts of "
                              f"{', '.join(self.domains or ['any domain'])}")
        e = paired_bootstrap_delta({str(k): v for k, v in after.items()}, {str(k): v for k, v in before.items()},
                                   scale=100.0)
        what = "+".join(self.domains) if self.domains else f"average of {len(doms_seen)} domains"
        return [{"target": self.key, "claim": self.claim, "measure": f"{self.stage} - input, {what}",
                 **e.as_dict(), "seeds": len(runs), "holds": e.ci_low > 0}]


@dataclass(frozen=True)
class TeacherMatchTarget:
    key: str
    claim: str
    stage: str = "mopd"

    def evaluate(self, runs: list[RunDir]) -> list[dict]:
        per_dom: dict[str, dict] = {}
        for run in runs:
            picks = read_teachers(run).get("mopd", {}).get("teachers", {})
            if not picks:
                raise FileNotFoundError(f"run {run.run_id}: teachers.json has no MOPD routing (run mopd first)")
            for d, t in picks.items():
                slot = per_dom.setdefault(d, {"student": [], "teacher": [], "teachers": set()})
                ck = t.get("candidate", f"{t['stage']}@final").split("@", 1)[1]
                try:
                    teacher = _means(run, t["stage"], d, ck)
                except FileNotFoundError:
                    slot["missing"] = f"{t['stage']}@{ck} has no report-split samples"
                    continue
                slot["teacher"] += list(teacher.values())
                slot["student"] += list(_means(run, self.stage, d).values())
                slot["teachers"].add(f"{t['stage']}@{ck}")
        rows = []
        for d, s in per_dom.items():
            if not s["teacher"]:
                rows.append({"target": self.key, "claim": self.claim, "measure": f"{self.stage} vs teacher, {d}",
                             "note": s.get("missing"), "holds": None})
                continue
            te = mean_ci(s["teacher"], scale=100.0, bounds=(0.0, 100.0))
            st = mean_ci(s["student"], scale=100.0, bounds=(0.0, 100.0))
            rows.append({"target": self.key, "claim": self.claim,
                         "measure": f"{self.stage} vs teacher ({', '.join(sorted(s['teachers']))}), {d}",
                         **st.as_dict(), "teacher": te.as_dict(), "seeds": len(runs), "holds": st.score >= te.ci_low})
        return rows


@dataclass(frozen=True)
class NoRegressionTarget:
    """A stage leaves the domains it does not train where they were: pooled over the runs, no untrained domain's
    paired change has its whole interval below 0 with a drop of more than ``margin`` points (the paper's multi-domain
    RL "regressed no tracked benchmark", §4.3). The row shows the worst untrained domain; ``regressed`` lists all."""
    key: str
    claim: str
    stage: str
    margin: float = 3.0

    def evaluate(self, runs: list[RunDir]) -> list[dict]:
        from recipe.config import load_config
        from recipe.reporting.regressions import trained_domains
        trained: set[str] = set()
        seen: list[str] = []
        for run in runs:
            seen += [r["domain"] for r in read_samples(samples_path(run, self.stage, "final", "val"))]
            if not run.config_path.exists():
                raise LookupError(f"run {run.run_id} has no config.yaml: which domains {self.stage} trains is unknown")
            trained |= trained_domains(load_config(run.config_path), self.stage) or set()
        others = [d for d in dict.fromkeys(seen) if d not in trained]
        rows = []
        for d in others:
            try:
                rows.append({"domain": d, **DeltaTarget(self.key, self.claim, self.stage, (d,)).evaluate(runs)[0]})
            except LookupError:
                continue
        if not rows:
            raise LookupError(f"{self.stage} has no report-split prompts of a domain it does not train")
        regressed = [r["domain"] for r in rows if r["ci_high"] < 0 and r["score"] < -self.margin]
        worst = min(rows, key=lambda r: r["score"])
        return [{**worst, "measure": f"{self.stage} - input, worst of {len(rows)} untrained domains ({worst['domain']})",
                 "regressed": regressed, "holds": not regressed}]


TARGETS: list = [
    DeltaTarget("a", "IF-RL raises instruction following", "if_rl", ("instruction_following",)),
    DeltaTarget("b", "multi-domain RL raises MCQA + tool calls", "multi_domain_rl", ("mcqa", "tool_call")),
    DeltaTarget("c", "RLHF raises the chat win rate", "rlhf", ("chat",)),
    DeltaTarget("d", "MOPD's average over all domains beats its input's", "mopd", None),
    TeacherMatchTarget("e", "MOPD ends within the CI of each teacher on that teacher's domain"),
    DeltaTarget("f", "long-context RL raises long-context QA", "long_context_rl", ("long_context",)),
    DeltaTarget("g", "code RL raises code (hidden unit tests)", "code_rl", ("code",)),
    DeltaTarget("h", "SWE RL (agentless, then agentic) raises agentless SWE", "swe_rl", ("swe",)),
    DeltaTarget("i", "SWE RL (agentless, then agentic) raises agentic SWE", "swe_rl", ("swe_agentic",)),
    NoRegressionTarget("j", "multi-domain RL regresses no domain it does not train", "multi_domain_rl"),
]


def stage_domain_deltas(runs: list[RunDir], stage: str, domains: list[str]) -> list[dict]:
    """A stage against its input on every domain, each pooled over ``runs`` (report split): the paired change, and the
    stage's score (``after``) beside its input's 95% interval (``input``): what it costs or spares the domains it
    does not train (main-line RLHF's cost, docs/EVIDENCE.md)."""
    rows = []
    for d in domains:
        row = DeltaTarget(stage, f"{stage} on {d}", stage, (d,)).evaluate(runs)[0]
        before = [v for run in runs for v in _means(run, _stage_input(run, stage), d).values()]
        after = [v for run in runs for v in _means(run, stage, d).values()]
        rows.append({**row, "domain": d, "after": mean_ci(after, scale=100.0, bounds=(0.0, 100.0)).as_dict(),
                     "input": mean_ci(before, scale=100.0, bounds=(0.0, 100.0)).as_dict()})
    return rows


def claim_line(row: dict) -> str:
    """One claim as a line: ``(a) IF-RL raises instruction following: if_rl - input, ... +12.3 [+8.1, +16.4],
    n 150: holds`` (``not shown`` when the interval does not say so; ``not evaluated`` when the stage did not run).
    ``recipe run``'s closing lines, ``recipe report`` and ``benchmarks/bench_evidence.py`` all print these rows."""
    head = f"({row['target']}) {row['claim']}"
    if row.get("score") is None:
        return f"{head}: not evaluated ({row.get('note')})"
    if "teacher" in row:
        t = row["teacher"]
        value = (f"{row['score']:.1f} [{row['ci_low']:.1f}, {row['ci_high']:.1f}] vs teacher {t['score']:.1f} "
                 f"[{t['ci_low']:.1f}, {t['ci_high']:.1f}]")
    else:
        value = f"{row['score']:+.1f} [{row['ci_low']:+.1f}, {row['ci_high']:+.1f}]"
    verdict = "holds" if row["holds"] else \
        f"fails: {', '.join(row['regressed'])} regressed" if row.get("regressed") else "not shown"
    return f"{head}: {row['measure']} {value}, n {row['n']}: {verdict}"


def evidence_rows(runs: list[RunDir], targets: list | None = None) -> list[dict]:
    """One row per target (per domain for teacher matches); a target whose stage did not run says so."""
    out = []
    for t in targets or TARGETS:
        try:
            out += t.evaluate(runs)
        except (FileNotFoundError, LookupError) as e:
            out.append({"target": t.key, "claim": t.claim, "note": str(e), "holds": None})
    return out
