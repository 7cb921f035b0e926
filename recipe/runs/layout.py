"""Run layout (DESIGN.md §3)::

    runs/<run_id>/
      run.json            profile, resolved-config hash, git commit, seed, start time (+ cluster provenance)
      config.yaml         the fully resolved config
      00_data/            data phase (tiny-domain files, curation report, notebook)
      <NN>_<stage>/       NN = 1-based position in the stage plan
        manifest.json     status pending|running|done|failed, inputs (+sha256), outputs, metrics summary, timings
        checkpoint/       Hugging Face folder (safetensors, config, tokenizer + chat template, generation_config)
        metrics.jsonl     one line per step
        tensorboard/      the same rows as TensorBoard scalars, NeMo-RL's tag names (recipe/runs/tb_events.py)
        validation.json   per-domain scores of this stage's checkpoint
        notebook.ipynb    the executed notebook
      teachers.json       per domain: best checkpoint so far and its score (drives MOPD)
      scores.json         checkpoint x domain matrix

Every JSON write is tmp-then-rename (atomic); a stage is done only when its manifest says so, written last.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from recipe.config.schema import STAGE_PLAN

DATA_PHASE = "data"
REPORT_PHASE = "report"


PROJECT_ROOT = Path(__file__).resolve().parents[2]


def runs_root() -> Path:
    """``$RECIPE_RUNS_DIR`` when set, else the project's ``runs/`` (beside ``pyproject.toml``) whatever the working
    directory: JupyterLab started in ``notebooks/`` and ``make run`` share one folder, and runs never land inside
    the git tree's tracked folders. An installed (non-checkout) package falls back to ``./runs``."""
    env = os.environ.get("RECIPE_RUNS_DIR")
    if env:
        return Path(env).expanduser().resolve()
    if (PROJECT_ROOT / "pyproject.toml").is_file():
        return PROJECT_ROOT / "runs"
    return Path("runs").resolve()


MIRROR_ENV = "RECIPE_BENCHMARK_MIRROR"


def benchmark_mirror(cfg) -> Path | None:
    """The local folder of benchmark files: ``benchmarks.mirror`` when set, else ``$RECIPE_BENCHMARK_MIRROR``, else
    none (the Hub, where ``allow_hub``; otherwise the suite is reported unavailable). A relative path is taken from
    the project root, so the same setting works from ``notebooks/`` and from the checkout. Evaluation reads its
    benchmark files there, and the data phase the prompts it decontaminates against."""
    m = cfg.benchmarks.mirror or os.environ.get(MIRROR_ENV)
    if not m:
        return None
    p = Path(m)
    return p if p.is_absolute() else (PROJECT_ROOT / p)


def file_stamp(path: Path) -> tuple[int, int, int]:
    """(inode, size, mtime_ns): what tells a run file apart from its rewrite (an atomic rewrite is a new inode, an
    append a new size) for the in-process caches of parsed files (``load_splits``, the report's deltas)."""
    st = Path(path).stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def process_umask() -> int:
    """The process's umask, read without changing it (``/proc/self/status`` on Linux; ``os.umask`` round trip, which
    briefly sets it, elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def apply_umask_modes(root: Path) -> None:
    """Give every file and folder under ``root`` (and ``root`` itself) the mode a plain ``open``/``mkdir`` would have
    given it under the process's umask. Temporary files (``tempfile.mkstemp``, and the temp files that
    ``save_pretrained`` and safetensors write through) are 0600; renamed into place they would keep that mode, and
    collaborators on a shared cluster filesystem could not read the checkpoint."""
    mask = process_umask()
    root = Path(root)
    paths = [root, *root.rglob("*")] if root.is_dir() else [root]
    for p in paths:
        if p.is_symlink():
            continue
        os.chmod(p, (0o777 if p.is_dir() else 0o666) & ~mask)


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path``, fsync, then rename over it: readers see old or new, never half.
    The file gets the umask's mode, as a plain write would (``mkstemp`` creates it 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        apply_umask_modes(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, default=str))


def replace_dir(tmp: Path, path: Path) -> None:
    """Move a fully written folder ``tmp`` to ``path``, replacing any previous copy: the old copy is renamed to
    ``<path>.old`` first and removed last, so a kill at any moment leaves a complete folder at one of the names.
    Every file gets the umask's mode first (``save_pretrained`` writes ``model.safetensors`` 0600)."""
    import shutil
    apply_umask_modes(tmp)
    old = path.with_name(path.name + ".old")
    if path.exists():
        if old.exists():
            shutil.rmtree(old)
        os.replace(path, old)
    os.replace(tmp, path)
    if old.exists():
        shutil.rmtree(old)


def read_json(path: Path, default: Any = None) -> Any:
    path = Path(path)
    if not path.exists():
        return default
    return json.loads(path.read_text())


class RunDir:
    """Paths and atomic reads/writes of one run directory."""

    def __init__(self, root: Path | str):
        self.path = Path(root).resolve()

    @classmethod
    def for_id(cls, run_id: str) -> "RunDir":
        if not run_id or "/" in run_id or run_id.startswith("."):
            raise ValueError(f"bad run id {run_id!r}: use letters, digits, '-', '_'")
        return cls(runs_root() / run_id)

    @property
    def run_id(self) -> str:
        return self.path.name

    def relpath(self, path: Path | str) -> str:
        """How run files store a path: relative to the run directory when it lies inside it (a run copied to another
        disk or shared with a colleague still points at its own checkpoints), unchanged otherwise (a cluster
        checkpoint outside the run)."""
        try:
            return Path(path).resolve().relative_to(self.path).as_posix()
        except ValueError:
            return str(path)

    def resolve_path(self, stored: Path | str) -> Path:
        """The inverse of ``relpath``: a stored relative path is taken from the run directory."""
        p = Path(stored)
        return p if p.is_absolute() else self.path / p

    # -- run-level files -------------------------------------------------------------------------------
    @property
    def run_json_path(self) -> Path:
        return self.path / "run.json"

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def teachers_path(self) -> Path:
        return self.path / "teachers.json"

    @property
    def scores_path(self) -> Path:
        return self.path / "scores.json"

    def exists(self) -> bool:
        return self.run_json_path.exists()

    def read_run_json(self) -> dict:
        data = read_json(self.run_json_path)
        if data is None:
            raise FileNotFoundError(f"{self.run_json_path} not found: is {self.run_id!r} a run? "
                                    f"(start one with `recipe run --run-id {self.run_id}`)")
        return data

    def update_run_json(self, **fields: Any) -> dict:
        data = read_json(self.run_json_path, {}) or {}
        data.update(fields)
        write_json_atomic(self.run_json_path, data)
        return data

    def write_json_atomic(self, path: Path, obj: Any) -> None:
        write_json_atomic(path, obj)

    # -- stage dirs ------------------------------------------------------------------------------------
    def stage_dir(self, stage: str) -> Path:
        if stage == DATA_PHASE:
            return self.path / "00_data"
        if stage == REPORT_PHASE:
            return self.path / "99_report"
        if stage not in STAGE_PLAN:
            raise KeyError(f"unknown stage {stage!r}; the plan is {', '.join(STAGE_PLAN)}")
        return self.path / f"{STAGE_PLAN.index(stage) + 1:02d}_{stage}"

    def checkpoint_dir(self, stage: str) -> Path:
        return self.stage_dir(stage) / "checkpoint"

    def manifest_path(self, stage: str) -> Path:
        return self.stage_dir(stage) / "manifest.json"

    def read_manifest(self, stage: str) -> dict | None:
        return read_json(self.manifest_path(stage))

    def write_manifest(self, stage: str, manifest: dict) -> None:
        write_json_atomic(self.manifest_path(stage), manifest)

    def is_done(self, stage: str) -> bool:
        m = self.read_manifest(stage)
        return bool(m) and m.get("status") == "done"

    def metrics_path(self, stage: str) -> Path:
        return self.stage_dir(stage) / "metrics.jsonl"

    def append_metrics(self, stage: str, row: dict) -> None:
        p = self.metrics_path(stage)
        p.parent.mkdir(parents=True, exist_ok=True)
        # Flushed, not fsynced (as the step checkpoints): a killed process loses nothing written, and a resume drops
        # the rows after its checkpoint. An fsync per row cost ~3 ms: ~5 s of a tiny run's ~1,600 (with TensorBoard's)
        with open(p, "a") as f:
            f.write(json.dumps(row, sort_keys=True) + "\n")
        from recipe.runs import tb_events  # the same row as TensorBoard scalars, NeMo-RL tag names
        tb_events.append_row(self.stage_dir(stage), row)

    def truncate_metrics(self, stage: str, keep_steps_below: int) -> None:
        """Drop metric rows of steps >= keep_steps_below (used when resuming from a step checkpoint)."""
        rows = [r for r in self.read_metrics(stage) if r.get("step", -1) < keep_steps_below]
        write_text_atomic(self.metrics_path(stage), "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        from recipe.runs import tb_events
        tb_events.rewrite(self.stage_dir(stage), rows)

    def read_metrics(self, stage: str) -> list[dict]:
        p = self.metrics_path(stage)
        if not p.exists():
            return []
        rows = []
        for line in p.read_text().splitlines():
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:  # a torn last line after a kill: ignore it
                    continue
        return rows

    def validation_path(self, stage: str) -> Path:
        return self.stage_dir(stage) / "validation.json"

    def write_validation(self, stage: str, scores: dict[str, float], **extra: Any) -> None:
        write_json_atomic(self.validation_path(stage), {"stage": stage, "scores": scores, **extra})

    def read_validation(self, stage: str) -> dict[str, float] | None:
        data = read_json(self.validation_path(stage))
        return None if data is None else data["scores"]

    def notebook_path(self, stage: str) -> Path:
        return self.stage_dir(stage) / "notebook.ipynb"

    def done_stages(self) -> list[str]:
        return [s for s in STAGE_PLAN if self.is_done(s)]
