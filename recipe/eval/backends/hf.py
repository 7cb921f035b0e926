"""In-process Hugging Face generation for local checkpoints (the tiny model, or any HF folder that fits).

Prompts are rendered with the checkpoint's own chat template (``enable_thinking`` = the mode), generated in batches
with ``recipe.train.rollout.generate`` (temperature 0 = greedy), and returned raw: thinking is not split out, so the
scorers apply the thinking rule themselves. A response that hit ``max_tokens`` before ``<|im_end|>`` has
``finish_reason == "length"``. ``describe()`` records the folder and the sha256 of its weights.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator

import torch

from recipe.eval.backends.backend_interface import Generation, Job
from recipe.eval.sampling_settings import SamplingParams
from recipe.runs.content_hashes import sha256_file


def weights_sha256(path: Path) -> str:
    files = sorted(Path(path).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"{path}: no *.safetensors weights")
    if len(files) == 1:
        return sha256_file(files[0])
    import hashlib
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.name}:{sha256_file(f)}\n".encode())
    return h.hexdigest()


class HFBackend:
    name = "hf_local"

    def __init__(self, path: str | Path, *, batch_size: int = 32, model=None, tokenizer=None, device: str = "auto"):
        """``device``: ``auto`` (CUDA when present, else CPU), ``cpu`` or ``cuda``, as ``run.device``; a model it
        loads goes there (a model passed in stays where it is). Generation runs under the trainers' precision:
        bf16 autocast over fp32 weights on CUDA (``recipe.train.device``)."""
        from recipe.model import load_checkpoint
        from recipe.train.device import resolve_device
        self.path = Path(path)
        if model is None or tokenizer is None:
            model, tokenizer = load_checkpoint(self.path)
            model = model.to(resolve_device(device))
        self.model, self.tokenizer = model, tokenizer
        self.batch_size = batch_size
        self._sha = None
        # (batch, batches, tokens, cap, live rows) after each decode step of a CPU / eager decode: the long
        # evaluations' progress line (recipe.eval.answer_progress.AnswerProgress.decode_step)
        self.on_decode_step: Callable[[int, int, int, int, int], None] | None = None

    def describe(self) -> dict:
        if self._sha is None:
            self._sha = weights_sha256(self.path)
        from recipe.train.device import model_device, precision_name
        desc = {"backend": self.name, "model": str(self.path), "model_sha256": self._sha,
                "batch_size": self.batch_size, "torch": torch.__version__}
        precision = precision_name(model_device(self.model))
        if precision != "float32":  # bf16 autocast gives other greedy tokens: part of the sample cache's key
            desc["precision"] = precision
            from recipe.model.decode.llama import is_lean_llama, model_cpu_kv_dtype
            if model_device(self.model).type == "cpu" and is_lean_llama(self.model):
                # the K/V cache's dtype is chosen per CPU (recipe.model.decode.llama.cpu_kv_dtype) and moves logits
                desc["precision"] += f", {str(model_cpu_kv_dtype(self.model)).removeprefix('torch.')} K/V cache"
        return desc

    def render(self, messages: list[dict], thinking: bool, tools: list | None = None) -> str:
        from recipe.model.chat_render import apply_template
        return apply_template(self.tokenizer, messages, tools=tools, add_generation_prompt=True,
                              enable_thinking=thinking)

    def generate(self, jobs: Iterable[Job], sampling: SamplingParams) -> Iterator[tuple[Job, Generation]]:
        from recipe.train.rollout import generate
        jobs = list(jobs)
        greedy = sampling.temperature == 0.0
        batches = -(-len(jobs) // self.batch_size)
        for b, i in enumerate(range(0, len(jobs), self.batch_size)):
            chunk = jobs[i:i + self.batch_size]
            torch.manual_seed(chunk[0].seed)
            prompts = [self.render(j.messages, sampling.thinking, j.tools) for j in chunk]
            hook = self.on_decode_step
            on_step = None if hook is None else (
                lambda tokens, live, b=b: hook(b + 1, batches, tokens, sampling.max_tokens, live))
            ro = generate(self.model, self.tokenizer, prompts, max_new_tokens=sampling.max_tokens,
                          temperature=sampling.temperature or 1.0, top_p=sampling.top_p, greedy=greedy,
                          on_step=on_step)
            n_prompt = (ro.attention_mask_BS - ro.mask_BS.long()).sum(1).tolist()
            n_resp = ro.mask_BS.sum(1).long().tolist()
            for j, text, fin, p, c in zip(chunk, ro.texts, ro.finished_B.tolist(), n_prompt, n_resp):
                yield j, Generation(content=text, finish_reason="stop" if fin else "length",
                                    prompt_tokens=int(p), completion_tokens=int(c))
