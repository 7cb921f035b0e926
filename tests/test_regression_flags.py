"""Regression flags (recipe.reporting.regressions) on a constructed table of paired deltas: a stage that lowers a
domain it does not train, with its whole interval below 0, is flagged; a drop inside its interval, a drop of the
stage's own domain, and SFT (which trains every domain) are not."""
from __future__ import annotations

from rich.console import Console

from recipe.config import load_config
from recipe.reporting.regressions import flag_line, regression_flags, trained_domains
from recipe.reporting.run_report import print_regressions


def _e(score, lo, hi, n=150):
    return {"score": score, "ci_low": lo, "ci_high": hi, "n": n}


DELTAS = {
    "sft": {"input": None, "math": _e(-20.0, -30.0, -10.0)},
    "multi_domain_rl": {"input": "if_rl", "mcqa": _e(+6.0, +2.0, +10.0), "tool_call": _e(-9.0, -14.0, -4.0),
                        "code": _e(-17.2, -25.0, -9.4), "swe": _e(-15.6, -23.1, -8.0, 48),
                        "chat": _e(-3.0, -7.5, +1.2)},
    "mopd": {"input": "multi_domain_rl", "mcqa": _e(-17.0, -21.0, -13.0), "math": _e(+1.0, -1.0, +3.0)},
    "rlhf": {"input": "mopd", "chat": _e(+8.0, +5.0, +11.0), "instruction_following": _e(-5.1, -7.8, -2.4)},
}
TRAINED = {"sft": None, "multi_domain_rl": {"mcqa", "tool_call"}, "mopd": {"math", "mcqa"}, "rlhf": {"chat"}}


def test_a_stage_is_flagged_only_for_untrained_domains_whose_interval_is_below_zero():
    flags = regression_flags(DELTAS, TRAINED)
    assert [(f["stage"], f["domain"]) for f in flags] == [
        ("multi_domain_rl", "code"), ("multi_domain_rl", "swe"), ("rlhf", "instruction_following")]
    assert flags[0] == {"stage": "multi_domain_rl", "input": "if_rl", "domain": "code", **_e(-17.2, -25.0, -9.4)}
    assert flag_line(flags[2]) == ("rlhf lowers instruction_following (not trained by it) against mopd: "
                                   "-5.1 [-7.8, -2.4] points, n 150")


def test_the_report_prints_each_flag_or_that_there_is_none():
    console = Console(record=True, width=200)
    print_regressions(regression_flags(DELTAS, TRAINED), console)
    print_regressions([], console)
    text = console.export_text()
    assert "Regressions (3)" in text and "! multi_domain_rl lowers code" in text
    assert "no stage lowers a domain it does not train" in text


def test_trained_domains_come_from_each_stage_of_the_config():
    cfg = load_config("tiny")
    assert trained_domains(cfg, "sft") is None
    assert trained_domains(cfg, "multi_domain_rl") == set(cfg.multi_domain_rl.domains)
    assert trained_domains(cfg, "swe_rl") == set(cfg.swe_rl.agentless.domains) | set(cfg.swe_rl.agentic.domains)
