"""``olympiad:`` section: settings of the olympiad scorers (EVAL.md §4–7). Paper values live in
``profiles/paper/olympiad.yaml`` with their sources; tiny values in ``profiles/tiny/olympiad.yaml``."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from recipe.config.strict_section import StrictSection


class JudgeSampling(StrictSection):
    temperature: float = Field(1.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(32768, gt=0)


class AnswerBenchSection(StrictSection):
    version: Literal["v1", "v2", "v2-pr18"] = "v2"
    k: int = Field(16, ge=1, description="avg@k: samples per problem.")
    on_malformed: Literal["exclude", "error"] = "exclude"
    precheck: bool = Field(True, description="Math-Verify pre-check; the judge only sees answers it does not settle.")
    judge_model: str = "gpt-oss-120b"
    judge: JudgeSampling = Field(default_factory=JudgeSampling)


class ProofGradingSection(StrictSection):
    version: Literal["v1", "v2"] = "v2"
    judge_model: str = "DeepSeek-V3.2-Speciale"
    judge_samples: int = Field(64, ge=1, description="Grading attempts per proof.")
    aggregation: Literal["zero_if_any_zero", "mean"] = Field(
        "zero_if_any_zero", description="zero_if_any_zero: 0 if any grade is 0, else the mean (EVAL.md §4); mean: plain mean.")
    invalid_grade: Literal["skip", "zero"] = Field("zero", description="A judge reply without <points> (or a failed "
                                                   "request): graded 0 (EVAL.md §4), or skipped (counted); a proof no "
                                                   "reply graded scores 0 either way.")
    judge: JudgeSampling = Field(default_factory=JudgeSampling)


class ProofTTSSection(StrictSection):
    """Generate → verify → refine (EVAL.md §5, DeepSeek-Math-V2 style)."""
    generations: int = Field(128, ge=1, description="Initial proofs per problem.")
    verifications: int = Field(64, ge=1, description="Verification analyses per proof.")
    refine_top: int = Field(32, ge=1, description="Best proofs (by mean verification score) refined each round.")
    analyses_per_refine: int = Field(8, ge=1, description="Analyses shown to a refinement, lowest-rated first.")
    refined_per_proof: int = Field(4, ge=1, description="Refined proofs produced from each selected proof per round.")
    max_rounds: int = Field(8, ge=0)
    stop_mean_score: float = Field(0.99999, ge=0, le=1, description="Stop once the best proof's mean score reaches this.")
    temperature: float = 1.0
    top_p: float = 0.95
    max_tokens: int = Field(262144, gt=0)
    reduced: "ProofTTSBudget | None" = None
    reduced_problems: list[str] = Field(default_factory=list, description="Problem IDs run with the reduced budget.")


class ProofTTSBudget(StrictSection):
    generations: int = Field(ge=1)
    verifications: int = Field(ge=1)
    refine_top: int = Field(ge=1)
    max_rounds: int = Field(ge=0)


class IOISection(StrictSection):
    max_submissions: int = Field(50, ge=1, le=50, description="Per task (IOI rules).")
    time_scale: float = Field(1.0, gt=0, description="Multiplies every task time limit (record it with the score).")
    stop_at_zero: bool = True
    medal_cutoffs: dict[int, dict[str, float | None]] = Field(default_factory=dict)


class ICPCSection(StrictSection):
    penalty_minutes: int = Field(20, ge=0, description="Per rejected run before the first accepted one.")
    compile_error_penalty: bool = Field(False, description="Whether a compile error counts as a rejected run.")
    max_submissions_per_problem: int = Field(10, ge=1)
    minutes_per_submission: float = Field(1.0, ge=0, description="Simulated clock when generations carry no time.")
    require_samples: bool = Field(True, description="Policy: submit only candidates that pass the sample data.")


class OlympiadSection(StrictSection):
    imo_answer: AnswerBenchSection = Field(default_factory=AnswerBenchSection)
    imo_proof: ProofGradingSection = Field(default_factory=ProofGradingSection)
    proof_tts: ProofTTSSection = Field(default_factory=ProofTTSSection)
    ioi: IOISection = Field(default_factory=IOISection)
    icpc: ICPCSection = Field(default_factory=ICPCSection)


ProofTTSSection.model_rebuild()
