"""Regression flags: a stage that lowers a domain it does not train, by more than its paired interval allows.

The paper's stages each train one domain group and are expected to leave the others where they were (multi-domain
RL "regressed no tracked benchmark", §4.3; RLHF barely moves instruction following, §4.5), with MOPD recovering what
the specialised stages cost (§4.4). A flag is a domain outside the stage's ``domains`` whose paired change against the
stage's input checkpoint (report split, same prompts and sampling seeds: ``run_report.stage_deltas``) has its whole
95% interval below 0. ``recipe report`` and ``recipe run``'s closing lines print the flags with their intervals, so a
stage that erases a skill is seen on the seed where it happens, not only in a pooled mean.
"""
from __future__ import annotations

from recipe.config.schema import RecipeConfig


def trained_domains(cfg: RecipeConfig, stage: str) -> set[str] | None:
    """The domains ``stage`` trains (None: all of them, as SFT)."""
    if stage == "sft":
        return None
    if stage == "swe_rl":
        return set(cfg.swe_rl.agentless.domains) | set(cfg.swe_rl.agentic.domains)
    return set(cfg.stage(stage).domains)


def regression_flags(deltas: dict[str, dict], trained: dict[str, set[str] | None]) -> list[dict]:
    """``deltas``: {stage: {"input": stage, domain: {"score", "ci_low", "ci_high", "n"}}} (report_data's); ``trained``:
    {stage: the domains it trains, or None for all}. One flag per (stage, untrained domain) whose paired 95% interval
    lies wholly below 0, in stage order, the largest drop first within a stage."""
    flags = []
    for stage, dl in deltas.items():
        own = trained.get(stage)
        if own is None:
            continue
        rows = [{"stage": stage, "input": dl.get("input"), "domain": d, **e} for d, e in dl.items()
                if d != "input" and d not in own and isinstance(e, dict) and e.get("ci_high") is not None
                and e["ci_high"] < 0]
        flags += sorted(rows, key=lambda r: r["score"])
    return flags


def flag_line(flag: dict) -> str:
    return (f"{flag['stage']} lowers {flag['domain']} (not trained by it) against {flag['input']}: "
            f"{flag['score']:+.1f} [{flag['ci_low']:+.1f}, {flag['ci_high']:+.1f}] points, n {flag['n']}")
