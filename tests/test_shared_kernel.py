"""`recipe run` executes every notebook on one kernel: the same process, a clean namespace per notebook, cells
numbered from 1, and a fresh kernel when the previous one died."""
from __future__ import annotations

import os
import signal
import time

import nbformat
import papermill as pm
from jupyter_core.utils import run_sync

from recipe.pipeline.kernel import SharedKernel, register_shared_kernel_engine


def _notebook(path, *cells):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return str(path)


def _run(kernel, src, out):
    nb = pm.execute_notebook(src, str(out), kernel_name="python3", progress_bar=False, log_output=False,
                             engine_name=register_shared_kernel_engine(), km=kernel.manager())
    return [o for c in nb.cells for o in c.outputs], [c.execution_count for c in nb.cells]


def test_notebooks_share_one_kernel_with_a_clean_namespace(tmp_path):
    first = _notebook(tmp_path / "a.ipynb", "import os\nsecret = 41\nprint(os.getpid())")
    second = _notebook(tmp_path / "b.ipynb", "import os, sys\nprint(os.getpid())",
                       "print('secret' in dir(), 'nbformat' in sys.modules)")
    with SharedKernel(cwd=str(tmp_path)) as kernel:
        out_a, counts_a = _run(kernel, first, tmp_path / "a_out.ipynb")
        out_b, counts_b = _run(kernel, second, tmp_path / "b_out.ipynb")
        assert out_a[0]["text"] == out_b[0]["text"]            # the same kernel process
        assert out_b[1]["text"].split()[0] == "False"          # no variable of the first notebook
        assert counts_a == [1] and counts_b == [1, 2]          # each notebook counts its cells from 1
        assert kernel.starts == 1
        os.kill(int(out_a[0]["text"]), signal.SIGKILL)         # a kernel that died is replaced
        for _ in range(200):
            if not run_sync(kernel.km.is_alive)():
                break
            time.sleep(0.05)
        out_c, _ = _run(kernel, second, tmp_path / "c_out.ipynb")
        assert kernel.starts == 2 and out_c[0]["text"] != out_a[0]["text"]
    assert kernel.km is None


def test_startup_code_runs_once_per_kernel_and_its_errors_are_raised(tmp_path):
    import pytest

    # the startup code leaves a mark in a module (modules survive the namespace reset between notebooks)
    code = "import json; json._recipe_started = getattr(json, '_recipe_started', 0) + 1"
    nb = _notebook(tmp_path / "a.ipynb", "import json\nprint(json._recipe_started)")
    with SharedKernel(cwd=str(tmp_path), startup_code=code) as kernel:
        out_1, _ = _run(kernel, nb, tmp_path / "a1.ipynb")
        out_2, _ = _run(kernel, nb, tmp_path / "a2.ipynb")
        assert out_1[0]["text"].strip() == out_2[0]["text"].strip() == "1"
    with SharedKernel(cwd=str(tmp_path), startup_code="raise ValueError('no lanes here')") as kernel:
        with pytest.raises(RuntimeError, match="no lanes here"):
            kernel.manager()


def test_start_early_runs_the_startup_code_once_while_the_caller_goes_on(tmp_path):
    import pytest

    # the start-up code ends only once the caller has gone on (a file it writes after start_early returned):
    # a start_early that waited for it would fail here, and manager() must wait for it
    go = tmp_path / "go"
    code = ("import json, os, time\nt = time.monotonic()\n"
            f"while not os.path.exists({str(go)!r}):\n"
            "    assert time.monotonic() - t < 60, 'start_early waited for the start-up code'\n"
            "    time.sleep(0.01)\n"
            "json._recipe_started = getattr(json, '_recipe_started', 0) + 1")
    nb = _notebook(tmp_path / "a.ipynb", "import json\nprint(json._recipe_started)")
    with SharedKernel(cwd=str(tmp_path), startup_code=code) as kernel:
        kernel.start_early()
        go.write_text("")
        assert kernel.run_code("print('t' in dir())").strip() == "False"  # the start-up code's names are not left
        assert kernel.starts == 1
        out_1, _ = _run(kernel, nb, tmp_path / "a1.ipynb")
        out_2, _ = _run(kernel, nb, tmp_path / "a2.ipynb")
        assert out_1[0]["text"].strip() == out_2[0]["text"].strip() == "1" and kernel.starts == 1
    with SharedKernel(cwd=str(tmp_path), startup_code="raise ValueError('no lanes here')") as kernel:
        kernel.start_early()
        with pytest.raises(RuntimeError, match="no lanes here"):
            kernel.manager()


def _gone(pid: int, timeout: float = 20.0) -> bool:
    """True once ``pid`` has exited (gone, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_close_now_kills_the_kernel_and_its_forked_lanes_follow(tmp_path):
    """recipe run ends by killing its kernel (no graceful teardown to wait for); the lanes forked from it see their
    pipes close and exit."""
    code = "from recipe.validation.lanes import prestart_lanes\nprestart_lanes(2, fork=True)"
    with SharedKernel(cwd=str(tmp_path), startup_code=code) as kernel:
        kernel.start_early()
        out = kernel.run_code("import os\nfrom recipe.validation import lanes\n"
                              "print(os.getpid(), *[lane.proc.pid for lane in lanes._LANES])")
        pids = [int(p) for p in out.split()]
        assert len(pids) == 3
        kernel.close(now=True)
        assert kernel.km is None
        assert all(_gone(p) for p in pids), pids


def test_run_code_returns_what_the_kernel_printed_and_raises_its_errors(tmp_path):
    with SharedKernel(cwd=str(tmp_path)) as kernel:
        out = kernel.run_code("import os\nprint('pid', os.getpid())\nx = 6 * 7\nx")
        pid = int(out.split()[1])
        assert out.splitlines()[-1] == "42" and pid != os.getpid()      # ran in the kernel, its result shown
        assert kernel.run_code("print('x' in dir())").strip() == "False"  # a clean namespace each time
        try:
            kernel.run_code("def f():\n    raise ValueError('bad stage')\nf()")
        except RuntimeError as e:
            assert "ValueError: bad stage" in str(e) and "f()" in str(e)
        else:
            raise AssertionError("an exception in the kernel must be raised by run_code")
        assert int(kernel.run_code("import os; print(os.getpid())")) == pid  # the same kernel went on


def test_report_data_comes_from_the_kernel_or_falls_back_to_none():
    """`recipe run` asks its kernel (torch loaded) for the report's data (bootstrap deltas, claims); anything
    unexpected leaves them to the CLI (None) instead of failing a finished run."""
    from types import SimpleNamespace

    from recipe.pipeline.cascade_runner import _DATA_MARK, _report_data_in as _report_deltas

    run = SimpleNamespace(run_id="r")
    ok = SimpleNamespace(run_code=lambda code: f"noise\n{_DATA_MARK}" + '{"deltas": {"if_rl": {"input": "sft"}}}\n')
    assert _report_deltas(ok, run) == {"deltas": {"if_rl": {"input": "sft"}}}

    def fails(code):
        raise RuntimeError("NameError (in the shared kernel)")

    assert _report_deltas(SimpleNamespace(run_code=fails), run) is None
    assert _report_deltas(SimpleNamespace(run_code=lambda code: "no marker\n"), run) is None
