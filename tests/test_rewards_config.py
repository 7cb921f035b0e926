"""The ``verify`` config section: both profiles load, every key reaches the code, bad values fail early."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from recipe.config.verify_section import JudgeSection, SandboxSection, VerifySection
from recipe.rewards import verify_batch
from recipe.rewards.pairwise_judges import DeterministicRubricJudge, OpenAIPairwiseJudge, judge_from_section


@pytest.mark.parametrize("profile", ["tiny", "paper"])
def test_profiles_load_and_build(profile):
    from recipe.config import load_config

    v = load_config(profile).verify
    lim = v.sandbox.limits()
    assert lim.time_limit_s == v.sandbox.time_limit_s and lim.memory_mb == v.sandbox.memory_mb
    assert lim.stdout_limit_bytes == v.sandbox.stdout_limit_kb << 10 and lim.workdir_quota_mb == v.sandbox.workdir_quota_mb
    judge = judge_from_section(v.judge)
    assert isinstance(judge, OpenAIPairwiseJudge if v.judge.kind == "openai" else DeterministicRubricJudge)


def test_tiny_profile_uses_the_deterministic_judge_and_in_process_scoring():
    from recipe.config import load_config

    v = load_config("tiny").verify
    assert v.judge.kind == "deterministic_rubric" and v.workers is None and v.ray_address is None


def test_bad_values_fail_with_the_field_named():
    with pytest.raises(ValidationError, match="extra"):
        VerifySection(sandbox={"time_limit": 2})
    with pytest.raises(ValidationError, match="base_url"):
        JudgeSection(kind="openai")
    with pytest.raises(ValidationError):
        SandboxSection(memory_mb=0)


def test_math_timeout_and_pool_threshold_reach_verify_batch():
    recs = [{"verifier": {"name": "math", "expected_answer": "1"}}] * 3
    out = verify_batch(recs, ["\\boxed{1}"] * 3, math_timeout_s=0.000001, pool_threshold=10**6)
    assert [r.reason for r in out] == ["correct"] * 3  # a literal match needs no sympy time, so no timeout
    slow = [{"verifier": {"name": "math", "expected_answer": "\\frac{(3-\\sqrt{3})(2-\\sqrt{3})^{1016}+(3+\\sqrt{3})(2+\\sqrt{3})^{1016}}{6}"}}]
    r = verify_batch(slow, ["\\boxed{\\frac{(1+\\sqrt{3})^{2033}-(1-\\sqrt{3})^{2033}}{2^{1017}\\sqrt{3}}}"], math_timeout_s=0.05)
    assert r[0].reason == "timeout"
