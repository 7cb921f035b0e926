"""Per-notebook overhead of `make run`: each phase notebook starts its own kernel through papermill.

Prints (median of --repeat runs, seconds): a papermill execution of an empty notebook (kernel start + shutdown with
the IPC kernel manager `recipe run` uses), the kernel-side import of `recipe.pipeline.phase_notebook_api` (what every
notebook's first cell pays), and `import torch` (what stage notebooks add). Multiply the first two by the number of
notebooks `recipe run` executes to get the start-up share of `make run`. Time it on a quiet machine.

    python benchmarks/bench_kernel_startup.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _empty_notebook_s(tmp: Path) -> float:
    import nbformat
    import papermill as pm
    src = tmp / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), src)
    t0 = time.perf_counter()
    pm.execute_notebook(str(src), str(tmp / "out.ipynb"), kernel_name="python3", progress_bar=False,
                        log_output=False, kernel_manager_class="recipe.pipeline.kernel.IPCKernelManager")
    return time.perf_counter() - t0


def _import_s(module: str) -> float:
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        kernel = [_empty_notebook_s(Path(d)) for _ in range(a.repeat)]
    api = [_import_s("recipe.pipeline.phase_notebook_api") for _ in range(a.repeat)]
    torch = [_import_s("torch") for _ in range(a.repeat)]
    from recipe.config import load_config
    from recipe.config.schema import STAGE_PLAN
    until = load_config("tiny").run.until
    n_nb = 2 + STAGE_PLAN.index(until) + 1  # data + stages + report
    k, i = statistics.median(kernel), statistics.median(api)
    print(f"papermill empty notebook (kernel start+stop): {k:.2f} s")
    print(f"import recipe.pipeline.phase_notebook_api:          {i:.2f} s")
    print(f"import torch:                                 {statistics.median(torch):.2f} s")
    print(f"notebooks per `make run` (tiny): {n_nb}  ->  start-up overhead ~ {n_nb * (k + i):.1f} s")


if __name__ == "__main__":
    main()
