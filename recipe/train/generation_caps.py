"""Generation caps against the reference answers they must hold.

A response that hits its cap is unfinished: the verifier sees a cut answer (reward 0, or 0 by
``overlong_reward_zero``), so a cap below a domain's reference answers makes that domain unlearnable and its
validation score meaningless. (Measured at seed 0 before caps were checked: tool calls in thinking mode need 46-48
tokens, code 44-46, agentless SWE edits 83-95, under caps of 40 and 64; the SFT checkpoint scored tool_call 3.3 %,
code 6.3 %, swe 0 % with those caps and 15.3 %, 15.6 %, 12.5 % with caps that fit.)

``cap_shortfalls`` compares every cap that applies to a stage (its ``max_response_tokens`` per domain and mode;
per turn for agentic domains) and the validation caps with the token lengths of the reference answers the SFT data
teaches (the answer tokens after the prompt, ``<|im_end|>`` included).
"""
from __future__ import annotations

from dataclasses import dataclass

from recipe.config.schema import RecipeConfig
from recipe.config.stages import SWEConfig
from recipe.domains.example import AGENTIC_DOMAINS  # episodes in non-thinking mode; their cap is per turn


class GenerationCapWarning(UserWarning):
    """A generation cap is shorter than reference answers it must hold."""


@dataclass(frozen=True)
class CapShortfall:
    where: str        # "evaluation" or "<stage>[.<phase>]"
    domain: str
    thinking: bool
    cap: int
    longest_reference: int

    def __str__(self) -> str:
        mode = "thinking" if self.thinking else "instruct"
        return (f"{self.where}: cap {self.cap} tokens < the longest {self.domain} reference answer "
                f"({self.longest_reference} tokens, {mode} mode); such answers are cut and score 0")


def reference_answer_tokens(tokenizer, records: list[dict], thinking: bool) -> list[int]:
    """Token count of each record's reference answer as SFT renders it (``<|im_end|>`` included)."""
    from recipe.train.sft import SFTExamples
    ex = SFTExamples(tokenizer, records, max_len=1 << 30)
    return [len(a) for _, a in ex.get_many([(i, thinking) for i in range(len(records))])]


def _rl_phases(cfg: RecipeConfig, stage: str) -> list[tuple[str, object]]:
    """[(where, RL config)] of one stage: none for SFT, two for SWE RL (agentless, agentic)."""
    sc = cfg.stage(stage)
    if isinstance(sc, SWEConfig):
        return [(f"{stage}.agentless", sc.agentless), (f"{stage}.agentic", sc.agentic)]
    return [(stage, sc)] if hasattr(sc, "max_response_tokens") else []


def _thinking_modes(domain: str, mode: str) -> list[bool]:
    """The rendering modes a domain's responses take in a stage of ``mode`` (as_prompted: both)."""
    if domain in AGENTIC_DOMAINS or mode == "instruct":
        return [False]
    return [True] if mode == "thinking" else [True, False]


def cap_shortfalls(cfg: RecipeConfig, tokenizer, splits: dict, *, stages: list[str] | None = None,
                   evaluation: bool = True, sample: int = 200) -> list[CapShortfall]:
    """Caps shorter than the longest reference answer among the first ``sample`` training records of a domain.
    ``stages``: the stages to check (default: every stage of the plan)."""
    longest: dict[tuple[str, bool], int] = {}

    def ref_max(domain: str, thinking: bool) -> int:
        if (domain, thinking) not in longest:
            recs = splits[domain]["train"][:sample]
            longest[domain, thinking] = max(reference_answer_tokens(tokenizer, recs, thinking), default=0)
        return longest[domain, thinking]

    checks: list[tuple[str, str, bool, int]] = []
    for stage in cfg.stage_plan if stages is None else stages:
        for where, phase in _rl_phases(cfg, stage):
            checks += [(where, d, t, phase.max_response_tokens)
                       for d in phase.domains for t in _thinking_modes(d, phase.mode)]
    if evaluation:  # validation renders in thinking mode; agentic episodes are non-thinking
        checks += [("evaluation", d, d not in AGENTIC_DOMAINS, cfg.evaluation.cap_for(d)) for d in cfg.domains.names]
    out = []
    for where, d, thinking, cap in checks:
        if d in splits and splits[d].get("train") and ref_max(d, thinking) > cap:
            out.append(CapShortfall(where, d, thinking, cap, ref_max(d, thinking)))
    return out
