"""Generation settings of one evaluation, every knob explicit (EVAL.md §1: stack defaults differ, so nothing is left
to the server). ``thinking`` selects the chat template's mode (``enable_thinking``); ``k`` samples per item."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SamplingParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(1.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int = -1
    min_p: float = Field(0.0, ge=0.0, le=1.0)
    repetition_penalty: float = Field(1.0, gt=0.0)
    max_tokens: int = Field(1024, gt=0)
    thinking: bool = True
    k: int = Field(1, ge=1, description="Samples per item (avg@k, pass@k).")
    seed: int = 0

    def request_seed(self, item_index: int, sample: int) -> int:
        """A distinct, reproducible seed per (item, sample); servers that honour ``seed`` repeat a sample."""
        return (self.seed * 1_000_003 + item_index * 1009 + sample) % (2**31 - 1)
