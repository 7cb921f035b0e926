"""Fill a benchmark mirror with what the harness suites read (``recipe eval fetch-data``): each dataset is loaded once
by ``datasets.load_dataset`` of the environment that the harnesses run in (``.venv-evals``), with ``HF_HOME`` pointing into the mirror, so the prepared copy is in the layout and the version
that the harness's own loader finds offline. Needs the Hub (``HF_ENDPOINT`` honoured; ``HF_TOKEN`` for gated
datasets such as GPQA).
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from recipe.eval.harness_suites import (MIRROR_HF_HOME, HarnessSuite, evals_venv, harness_unavailable,
                                        prepared_dataset_dirs, suite_datasets)

# one process loads every dataset of a suite (datasets' import alone takes seconds); a line of JSON per dataset
_LOAD = """
import json, sys
from datasets import load_dataset
for repo, config in json.loads(sys.argv[1]):
    try:
        ds = load_dataset(repo, config)
        print(json.dumps({"repo": repo, "config": config, "rows": {k: len(v) for k, v in ds.items()}}), flush=True)
    except Exception as e:
        print(json.dumps({"repo": repo, "config": config, "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)
"""


def fetch_suite_data(suite: HarnessSuite, mirror: Path, progress=print) -> list[str]:
    """Prepare every dataset of ``suite`` under ``<mirror>/hf_home``; returns the ones that failed, each with why
    (an empty list: all present). Datasets already prepared there are not loaded again."""
    why = harness_unavailable(suite)
    if why:
        return [why]
    python = str(evals_venv() / "bin" / "python")   # the datasets release that the harness reads with
    hf_home = Path(mirror) / MIRROR_HF_HOME
    hf_home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HOME": str(hf_home)}
    for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_DATASETS_CACHE"):
        env.pop(k, None)
    todo = []
    for repo, config in suite_datasets(suite):
        label = f"{repo}:{config}" if config else repo
        if prepared_dataset_dirs(hf_home, repo, config):
            progress(f"{label}: already in {hf_home}")
        else:
            todo.append((repo, config))
    if not todo:
        return []
    r = subprocess.run([python, "-c", _LOAD, json.dumps(todo)], env=env, capture_output=True, text=True)
    done, failed = set(), []
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        label = f"{rec['repo']}:{rec['config']}" if rec.get("config") else rec["repo"]
        done.add((rec["repo"], rec.get("config")))
        if "error" in rec:
            failed.append(f"{label}: {rec['error']}")
            progress(f"{label}: FAILED ({rec['error']})")
        else:
            progress(f"{label}: {rec['rows']} rows -> {hf_home}")
    if r.returncode != 0 or len(done) < len(todo):
        last = [x for x in r.stderr.splitlines() if x.strip()]
        failed.append(f"the loader stopped (exit {r.returncode}): {last[-1][:300] if last else ''}")
    return failed
