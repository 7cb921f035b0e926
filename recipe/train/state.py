"""Atomic step checkpoints for resuming a stage: model weights, optimizer state and the step number.

Layout: ``<stage_dir>/state/`` = ``model.safetensors`` + ``optimizer.safetensors`` + ``state.json``; written to
``state.tmp`` and renamed (as NeMo-RL's ``tmp_step_N`` -> ``step_N``), so a kill at any moment leaves either the
previous complete state or the new one. Sampling is seeded per step (``step_seed``), so no RNG state is needed for
a resumed run to reproduce an uninterrupted one. safetensors + JSON only: nothing is unpickled.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from recipe.runs.layout import replace_dir
from recipe.seeding import derive_seed


def step_seed(seed: int, stage: str, step: int) -> int:
    return derive_seed(seed, stage, step)


class SaveClock:
    """When a stage writes its step state: with ``every_s`` (``run.state_save_every_s``) after the first step that
    ends at least that many seconds after the stage's start or its last save, since a state costs the same to write
    whatever a step costs (1.6 GB on the small profile: a step count tuned for one device saves far too often on a
    faster one); without it every ``every`` steps (the stage's ``save_every``). Never after the last step (the
    stage's checkpoint follows)."""

    def __init__(self, every: int, every_s: float | None):
        self.every, self.every_s, self.last = every, every_s, time.monotonic()

    def due(self, steps_done: int, total: int) -> bool:
        if steps_done >= total:
            return False
        if self.every_s is None:
            return steps_done % self.every == 0
        return time.monotonic() - self.last >= self.every_s

    def saved(self) -> None:
        self.last = time.monotonic()


def _optimizer_tensors(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    sd = opt.state_dict()
    tensors, scalars = {}, {}
    for pid, st in sd["state"].items():
        for k, v in st.items():
            if torch.is_tensor(v):
                tensors[f"{pid}.{k}"] = v.detach().cpu().contiguous()
            else:
                scalars[f"{pid}.{k}"] = v
    return tensors, {"scalars": scalars, "param_groups": sd["param_groups"]}


def _unshared(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """CPU copies safetensors can write: a tensor that shares storage with an earlier one (tied input/output
    embeddings, e.g. SmolLM2's) is cloned; loading writes the same values into the one tied parameter twice."""
    out, seen = {}, set()
    for k, v in state.items():
        t = v.detach().cpu().contiguous()
        ptr = t.untyped_storage().data_ptr()
        out[k] = t.clone() if ptr in seen else t
        seen.add(ptr)
    return out


def save_state(dirpath: Path, model, optimizer, step: int, extra: dict | None = None) -> None:
    dirpath = Path(dirpath)
    tmp = dirpath.with_name(dirpath.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    save_file(_unshared(model.state_dict()), str(tmp / "model.safetensors"))
    tensors, meta = _optimizer_tensors(optimizer)
    save_file(tensors, str(tmp / "optimizer.safetensors"))
    (tmp / "state.json").write_text(json.dumps({"step": step, "optimizer": meta, **(extra or {})}))
    replace_dir(tmp, dirpath)


def load_state(dirpath: Path, model, optimizer) -> int | None:
    """Restore model + optimizer; returns the next step to run, or None when there is no state."""
    dirpath = Path(dirpath)
    if not (dirpath / "state.json").exists():
        old = dirpath.with_name(dirpath.name + ".old")  # killed between the two renames
        if (old / "state.json").exists():
            dirpath = old
        else:
            return None
    meta = json.loads((dirpath / "state.json").read_text())
    model.load_state_dict(load_file(str(dirpath / "model.safetensors")))
    tensors = load_file(str(dirpath / "optimizer.safetensors"))
    state: dict[int, dict] = {}
    for key, v in tensors.items():
        pid, k = key.split(".", 1)
        state.setdefault(int(pid), {})[k] = v
    for key, v in meta["optimizer"]["scalars"].items():
        pid, k = key.split(".", 1)
        state.setdefault(int(pid), {})[k] = v
    groups = [{k: tuple(v) if k == "betas" else v for k, v in g.items()}  # JSON made the betas tuple a list
              for g in meta["optimizer"]["param_groups"]]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
    return int(meta["step"])


def resume_step(dirpath: Path, model, optimizer, stage: str, total_steps: int) -> int:
    """``load_state`` for a trainer's start: returns the first step to run (0 without saved state) and says on
    stderr, beside the progress bar, whether the stage resumes (and from which step) or starts fresh."""
    step = load_state(dirpath, model, optimizer)
    if step is None:
        print(f"[{stage}] starting at step 0 of {total_steps} (no saved state in {dirpath})", file=sys.stderr,
              flush=True)
        return 0
    print(f"[{stage}] resuming at step {step} of {total_steps}: model and optimizer restored from the state saved "
          f"after {step} steps ({dirpath})", file=sys.stderr, flush=True)
    return step


def clear_state(dirpath: Path) -> None:
    for p in (Path(dirpath), Path(str(dirpath) + ".tmp"), Path(str(dirpath) + ".old")):
        if p.exists():
            shutil.rmtree(p)
