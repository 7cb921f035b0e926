"""Build, save and load the policy model.

``build_tiny(cfg, corpus)`` makes a ``NemotronHForCausalLM`` (hybrid Mamba-2 / MoE / attention, the real base
model's family, RECIPE.md §1) from ``cfg.model.architecture`` and a tokenizer trained on the tiny domains.
Both return models whose Mamba mixers use the exact, faster CPU scan of ``recipe.model.fast_mamba`` (a
per-instance swap; the saved weights and config are plain NemotronH). Checkpoints are ordinary Hugging Face
folders (safetensors, config.json, generation_config.json, tokenizer with the chat template) written atomically:
into ``<dir>.tmp`` then renamed.
"""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, NemotronHConfig, NemotronHForCausalLM
from transformers.utils import logging as hf_logging

from recipe.config.model_section import ModelSection
from recipe.model.fast_mamba import use_fast_mamba
from recipe.runs.layout import replace_dir
from recipe.model.tokenizer import train_tokenizer


def quiet_hf() -> None:
    """Silence transformers' logging below errors, its progress bars, and the "fast path not available" warning
    before building or loading a model: on CPU the Mamba kernels are absent by design, so the notice is noise."""
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    warnings.filterwarnings("ignore", message=".*fast path.*")


def nemotron_h_config(section: ModelSection, tokenizer) -> NemotronHConfig:
    return NemotronHConfig(
        **section.architecture.model_dump(), use_mamba_kernels=False, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id, use_cache=True, dtype=section.dtype, architectures=["NemotronHForCausalLM"])


def build_tiny(section: ModelSection, corpus: list[str], seed: int):
    """Return (model, tokenizer) for the tiny profile: tokenizer trained on ``corpus``, model from ``seed``."""
    quiet_hf()
    if section.tokenizer is None:
        raise ValueError("model.tokenizer must be set for source: build_tiny")
    tokenizer = train_tokenizer(corpus, section.tokenizer.vocab_size)
    if len(tokenizer) > section.architecture.vocab_size:
        raise ValueError(f"tokenizer has {len(tokenizer)} tokens > model.architecture.vocab_size="
                         f"{section.architecture.vocab_size}; raise the latter")
    config = nemotron_h_config(section, tokenizer)
    torch.manual_seed(seed)
    model = NemotronHForCausalLM(config)
    use_fast_mamba(model)
    model.generation_config = default_generation_config(tokenizer)
    return model, tokenizer


def default_generation_config(tokenizer) -> GenerationConfig:
    # Model-card sampling defaults (RECIPE.md §2): T 1.0, top-p 0.95.
    return GenerationConfig(do_sample=True, temperature=1.0, top_p=0.95, eos_token_id=tokenizer.eos_token_id,
                            pad_token_id=tokenizer.pad_token_id, bos_token_id=None)


def save_checkpoint(model, tokenizer, path: Path) -> Path:
    """Write a Hugging Face folder atomically (tmp dir, then rename over any previous copy)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(tmp, safe_serialization=True)  # writes generation_config.json too
    tokenizer.save_pretrained(tmp)
    replace_dir(tmp, path)
    return path


def load_checkpoint(path: Path, *, trust_remote_code: bool = False):
    """Load (model, tokenizer) from a Hugging Face folder. safetensors only; no repository code unless asked."""
    quiet_hf()
    path = Path(path)
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"{path} is not a checkpoint folder (no config.json)")
    model = AutoModelForCausalLM.from_pretrained(path, use_safetensors=True, trust_remote_code=trust_remote_code,
                                                 dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    tokenizer.padding_side = "left"
    use_fast_mamba(model)  # exact, faster CPU scan for NemotronH (no-op for other architectures)
    model.eval()
    return model, tokenizer
