"""The model a run started from, as a Hugging Face folder ``recipe compare-to-start`` can evaluate.

A pretrained start (``model.source: pretrained``, the small profile's SmolLM2) is the folder ``model.name`` names.
A tiny run starts from a model built in process (``model.source: build_tiny``): the tokenizer trained on the run's
data and the weights drawn from ``run.seed``, both deterministic, so it is rebuilt exactly as SFT built it and saved
once under the comparison's folder. The rebuilt tokenizer is checked against the SFT checkpoint's: a run whose data
or config changed since would otherwise be compared with another model.
"""
from __future__ import annotations

from pathlib import Path


class StartModelUnavailable(FileNotFoundError):
    """The start model's folder cannot be had; the message names the cause and the fix."""


def start_model_folder(run, cfg, out: Path, start: str | Path | None = None) -> Path:
    """The folder of the model ``run`` started from: ``start`` when given, else ``model.name`` (pretrained), else the
    tiny model rebuilt into ``out/start_model`` (kept for the next comparison)."""
    if start is not None:
        return _hf_folder(Path(start), "--start")
    if cfg.model.source == "pretrained":
        return _hf_folder(Path(cfg.model.name), "model.name",
                          fix=f"import it with `recipe model import --out {cfg.model.name}`, or give --start FOLDER")
    folder = Path(out) / "start_model"
    if not (folder / "config.json").exists():
        _rebuild_tiny(run, cfg, folder)
    return folder


def _hf_folder(path: Path, what: str, fix: str = "give the folder of a Hugging Face model (config.json, weights, "
                                                 "tokenizer)") -> Path:
    if not (path / "config.json").is_file():
        raise StartModelUnavailable(f"{what}: {path} is not a Hugging Face model folder (no config.json); {fix}")
    return path


def _rebuild_tiny(run, cfg, folder: Path) -> None:
    """Build the untrained tiny model as SFT did (``recipe.pipeline.stage_runner``) and save it to ``folder``."""
    from recipe.domains import tokenizer_corpus
    from recipe.domains.data_phase import load_splits
    from recipe.model import build_tiny, save_checkpoint
    splits = load_splits(run, cfg)
    corpus = tokenizer_corpus(splits, cfg.domains.names, cfg.model.tokenizer.corpus_examples // 2)
    model, tok = build_tiny(cfg.model, corpus, cfg.run.seed)
    sft = run.checkpoint_dir("sft")
    if (sft / "tokenizer.json").is_file():
        from transformers import AutoTokenizer
        if AutoTokenizer.from_pretrained(sft).get_vocab() != tok.get_vocab():
            raise StartModelUnavailable(
                f"the tiny start model rebuilt from {run.path / 'config.yaml'} has another tokenizer than {sft} (the "
                "run's data or config changed after SFT); re-run the run's SFT, or give --start FOLDER")
    save_checkpoint(model, tok, folder)
