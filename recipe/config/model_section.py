"""The policy model: where it comes from and (for the tiny profile) how it is built.

``architecture`` uses the keys of a Hugging Face ``NemotronHConfig`` (``hybrid_override_pattern``: M = Mamba-2,
E = MoE, * = attention). The paper profile records the real base model's shape for reference and for the cluster
backend; the tiny profile builds a miniature of the same family in-process.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from recipe.config.strict_section import StrictSection


class NemotronHArch(StrictSection):
    hybrid_override_pattern: str = Field(description="Layer pattern: M Mamba-2, E MoE, * attention.")
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    mamba_num_heads: int
    mamba_head_dim: int
    ssm_state_size: int
    n_groups: int
    conv_kernel: int = 4
    chunk_size: int = 128
    n_routed_experts: int
    n_shared_experts: int = 1
    num_experts_per_tok: int
    moe_intermediate_size: int
    moe_shared_expert_intermediate_size: int
    routed_scaling_factor: float = 1.0
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool = False


class TokenizerSpec(StrictSection):
    vocab_size: int = Field(description="Target BPE vocabulary size (tokenizer trained offline on the tiny domains).")
    corpus_examples: int = Field(2000, description="Size of the tokenizer's training corpus: corpus_examples // 2 "
                                 "training records per domain, each rendered in thinking and instruct mode.")


class ModelSection(StrictSection):
    source: Literal["build_tiny", "pretrained"] = Field(
        description="build_tiny: build a NemotronH from `architecture` with an offline tokenizer; "
        "pretrained: load `name` (a Hub id or local folder) at `revision`.")
    name: str
    revision: Optional[str] = None
    architecture: Optional[NemotronHArch] = Field(None, description="NemotronH shape: built from for build_tiny, "
                                                  "recorded for the paper's base; a pretrained folder has its own.")
    thinking: Literal["template", "plain_tokens"] = Field(
        "template", description="template: the chat template renders thinking mode (the recipe's, or the model's "
        "when it knows enable_thinking); plain_tokens: the model's own ChatML with <think> written as plain text "
        "(recipe.model.plain_thinking), for a pretrained model without thinking tokens.")
    tokenizer: Optional[TokenizerSpec] = None
    dtype: Literal["float32", "bfloat16"] = "float32"
    trust_remote_code: bool = Field(False, description="Never execute repository code unless set explicitly.")

    @model_validator(mode="after")
    def _tiny_needs_shape(self) -> "ModelSection":
        if self.source == "build_tiny" and (self.architecture is None or self.tokenizer is None):
            raise ValueError("source: build_tiny needs model.architecture and model.tokenizer")
        return self
