"""The pairwise judge of the RLHF stages (``<stage>.judge``), one vocabulary for both implementations.

Field names follow NeMo-Gym's ``genrm_compare`` resources server so the cluster backend maps them one to one;
the tiny profile's ``rubric_pairwise`` judge reads the same aggregation fields (``recipe/rewards/group_reward.py``).
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from recipe.config.strict_section import AssignmentCheckedSection


class JudgeConfig(AssignmentCheckedSection):
    kind: Literal["rubric_pairwise", "genrm_compare"] = Field(
        description="rubric_pairwise: the tiny judge (an answer beats none, then more hidden rubric items met wins); "
        "genrm_compare: NeMo-Gym's GenRM compare server (cluster backend).")
    comparison_strategy: Literal["all_pairs", "circular"] = Field(
        "all_pairs", description="Which pairs of a prompt's responses are judged (Cascade 2: all pairs).")
    answer_length_penalty_coeff: float = Field(
        0.0, ge=0, description="Length normalisation: reward -= coeff * (len_i - group mean len) / group len range "
        "(zero-centred within the group; NeMo-Gym group_answer_length_penalty_coeff).")
    answer_bonus: float = Field(
        0.0, ge=0, description="Conciseness bonus for the shortest answer among the group's top performers "
        "(NeMo-Gym answer_bonus).")
    top_percentile: float = Field(
        0.2, gt=0, le=1, description="Quality gate of the bonus: only the top this-fraction of the group by judge "
        "score (at least one response) can get it (NeMo-Gym top_percentile).")
    length_tie_break: bool = Field(
        True, description="rubric_pairwise: equal rubric counts go to the shorter answer (off: they tie, as a "
        "GenRM told to ignore length alone would judge them; the length terms above still apply).")
    compare_url: Optional[str] = Field(
        None, description="genrm_compare: base URL of the NeMo-Gym genrm_compare resources server (POST /compare); "
        "the cluster backend starts the server and sets it, a local run may point it at one.")
    timeout_s: float = Field(600.0, gt=0, description="genrm_compare: seconds per /compare request.")
    genrm_model: Optional[str] = Field(None, description="genrm_compare: the GenRM served model name.")
    genrm_max_output_tokens: Optional[int] = Field(None, gt=0, description="genrm_compare: GenRM generation cap.")
    genrm_temperature: Optional[float] = Field(None, ge=0)
    genrm_top_p: Optional[float] = Field(None, gt=0, le=1)
