"""The notebooks as a person uses them: JupyterLab on loopback with a token and `make lab`'s pre-save hook, driven by
headless Debian Chromium through Playwright (the system executable; no browser build is downloaded) at 1440 px.

The report notebook is opened first, its parameters cell edited in the UI (a reduced profile), and Run All runs
every missing phase with live widget progress bars; then each phase notebook is opened, pointed at the same run and
Run All'd through the UI (the eval notebook with its own parameters: a small tiny suite on the run's MOPD
checkpoint). Each must end with the kernel idle and no error output; the heatmap image and the progress
bar must have rendered, and the run must be under $RECIPE_RUNS_DIR, not beside the notebooks.

What the person sees is checked too: every figure shown at its natural size (not scaled down), with something drawn
in colour and every axis labelled (the ``recipe:axes`` chunk ``recipe.reporting.plots.figure_png`` writes); every
table inside the output area (no column cut at the right edge) and no cell truncated by pandas; the heatmap's
teacher marks legible (WCAG contrast of the rendered pixels against their cell); and after the parameters cell is
typed back to what was committed and the notebook saved, the file is byte-identical to the committed one. The
notebooks are served from a copy, so nothing in the git tree changes. Screenshots: tests/artifacts/browser/
(gitignored)."""
from __future__ import annotations

import base64
import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from _tiny_fast import FAST

CHROMIUM = Path("/usr/bin/chromium")
VIEW_W = 1440  # the width the tables and figures must fit
ARTIFACTS = Path(__file__).parent / "artifacts" / "browser"
RUN_ID = "lab"
# FAST, smaller still: the whole cascade in-kernel in about a minute on 2 quiet cores
OVERRIDES = [*FAST, "sft.steps=12", "sft.save_every=6", "domains.tiny.val_items=8", "evaluation.max_new_tokens=8"]


def _params(run_id: str, overrides: list[str], extra: str = "", stage_knobs: bool = True) -> str:
    """A phase notebook's parameters cell; ``stage_knobs``: the backend/submit/pin knobs of the stage notebooks."""
    knobs = 'backend = "local"\nsubmit = False\nallow_unpinned = False\nallow_dirty = False\n' if stage_knobs else ""
    return f'run_id = "{run_id}"\nprofile = "tiny"\noverrides = {json.dumps(overrides)}\n{extra}{knobs}'


# every phase notebook with the parameters cell typed into it, in the order the test opens them (the report first:
# it runs every missing phase); the eval notebook has its own parameters (no profile: it evaluates a stage's
# checkpoint of the run), here a small tiny suite
NOTEBOOK_PARAMS = {
    "90_report.ipynb": _params(RUN_ID, OVERRIDES, "run_missing = True\n", stage_knobs=False),
    "00_data.ipynb": _params(RUN_ID, OVERRIDES, 'sources = []\ndecontaminate_against = []\n', stage_knobs=False),
    "10_sft.ipynb": _params(RUN_ID, OVERRIDES),
    "30_cascade_rl_stage.ipynb": _params(RUN_ID, OVERRIDES, 'stage = "if_rl"\n'),
    "40_mopd.ipynb": _params(RUN_ID, OVERRIDES),
    "50_eval.ipynb": (f'run_id = "{RUN_ID}"\nstage = "mopd"\ncheckpoint = None\nendpoint = None\nmodel = None\n'
                      'server = "vllm"\nsuites = ["tiny_math"]\nk = 1\ntemperature = None\ntop_p = None\n'
                      'max_tokens = 8\nthinking = None\nlimit = 4\nout = None\n'),
}

pytestmark = [
    pytest.mark.slow,
    # started early under `make test` (tests/conftest.py): the longest single test, it overlaps the rest
    pytest.mark.starts_first(rank=2),
]


def _need(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        pytest.skip(f"{module} is not installed (it is in the dev extra: make setup installs it)")


@pytest.fixture(scope="module")
def lab(tmp_path_factory, project_root):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: `make system-deps` installs Debian's chromium (apt-get install chromium)")
    _need("jupyterlab")
    _need("playwright")
    work = tmp_path_factory.mktemp("lab")
    nbdir = work / "notebooks"
    shutil.copytree(project_root / "notebooks", nbdir)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = {**os.environ, "RECIPE_RUNS_DIR": str(work / "runs"), "PYTHONPATH": str(project_root),
           "JUPYTER_CONFIG_DIR": str(work / "jcfg"), "JUPYTER_RUNTIME_DIR": str(work / "jrt"),
           "JUPYTERLAB_SETTINGS_DIR": str(work / "jset"), "JUPYTERLAB_WORKSPACES_DIR": str(work / "jws")}
    settings = work / "jset"  # every cell rendered (no windowing: prompts and outputs are all in the DOM)
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    log = open(work / "lab.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={nbdir}",
                             "--ServerApp.open_browser=False", "--allow-root",
                             # the hook `make lab` passes: a save writes the commit format
                             "--ContentsManager.pre_save_hook=recipe.pipeline.lab_hooks.strip_outputs"], cwd=nbdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(work / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield {"base": base, "token": token, "work": work, "nbdir": nbdir}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


DIALOGS: list[str] = []


def _accept_dialogs(page, name: str) -> None:
    """A modal (e.g. kernel selection when a notebook is reopened) blocks the UI: record its text, accept it, and wait
    until it has gone (on a loaded machine the dialog can take seconds to close, or come back once)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    for _ in range(6):
        dialog = page.locator(".jp-Dialog")
        if not dialog.count():
            return
        DIALOGS.append(f"{name}: {dialog.first.inner_text()[:300]}")
        page.screenshot(path=str(ARTIFACTS / f"{Path(name).stem}.dialog.png"))
        dialog.first.locator(".jp-Dialog-button.jp-mod-accept").first.click()
        try:
            page.locator(".jp-Dialog").first.wait_for(state="detached", timeout=5_000)
        except PlaywrightTimeout:
            continue


def _error_outputs(page) -> list[str]:
    """Texts of the cells' error outputs. JupyterLab renders an exception as an ``application/vnd.jupyter.stderr``
    output holding its traceback (there is no ``...jupyter.error`` element in the DOM); a warning printed to stderr
    has the same type but no traceback."""
    outs = page.locator(".jp-Notebook .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    return [t for t in outs.all_inner_texts() if "Traceback (most recent call last)" in t]


def _run_all(page, lab, name: str, params: str, timeout_s: float) -> float:
    """Open ``name``, replace its parameters cell through the UI, Run All, wait for every cell; returns seconds."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={lab['token']}")  # reset: no restored workspace
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=90_000)
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell').length > 3", timeout=30_000)
    idle = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
    page.wait_for_selector(idle, timeout=120_000, state="attached")  # the kernel is up
    _accept_dialogs(page, name)
    first = page.locator(".jp-Notebook .jp-CodeCell").first  # the parameters cell
    first.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(params)  # inserted as text: no auto-closed brackets
    page.keyboard.press("Escape")
    started = "() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]" \
              ".some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"

    def run_all() -> None:
        for attempt in range(12):  # Run All is dropped while the kernel's websocket is still connecting: again
            _accept_dialogs(page, name)
            try:  # a dialog that opens meanwhile intercepts the click: accept it on the next attempt
                # a kernel chosen in that dialog is still starting: Run All now would run only some cells (seen
                # under load: the last cell ran without the one before it, NameError), so wait until it is idle
                page.wait_for_selector(idle, timeout=30_000, state="attached")
                page.get_by_role("menuitem", name="Run", exact=True).click(timeout=10_000)
                page.locator(".lm-Menu-content .lm-Menu-item[data-command='runmenu:run-all']").click(timeout=10_000)
                page.wait_for_function(started, timeout=10_000)
                return
            except PlaywrightTimeout:
                page.keyboard.press("Escape")  # close a menu left open
                continue
        page.screenshot(path=str(ARTIFACTS / f"{name}.not-started.png"), full_page=True)
        pytest.fail(f"{name}: Run All never started a cell")

    run_all()
    n_code = page.locator(".jp-Notebook .jp-CodeCell").count()
    t0 = time.time()
    deadline = t0 + timeout_s
    stalled_since, reruns = None, 0
    while True:  # every code cell executed ([n]) and none running or queued ([*])
        prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_inner_texts()
        done = [p for p in prompts if p.strip().startswith("[") and p.strip()[1:-2].isdigit()]
        errors = len(_error_outputs(page))
        if errors or (len(done) == n_code and not any("*" in p for p in prompts)):
            break
        # Seen on a loaded machine: Run All executed the parameters cell only and dropped the rest (kernel idle,
        # nothing queued). The notebooks are idempotent (finished phases are skipped), so Run All again, twice at most.
        idle_now = page.locator(idle).count() > 0 and not any("*" in p for p in prompts)
        stalled_since = (stalled_since or time.time()) if idle_now else None
        if stalled_since and time.time() - stalled_since > 15 and reruns < 2:
            page.screenshot(path=str(ARTIFACTS / f"{Path(name).stem}.rerun{reruns}.png"), full_page=True)
            reruns, stalled_since = reruns + 1, None
            run_all()
        if time.time() > deadline:
            page.screenshot(path=str(ARTIFACTS / f"{name}.timeout.png"), full_page=True)
            pytest.fail(f"{name}: Run All did not finish in {timeout_s:.0f} s (prompts {prompts})")
        time.sleep(1.0)
    page.wait_for_selector(idle, timeout=60_000, state="attached")
    page.screenshot(path=str(ARTIFACTS / f"{Path(name).stem}.png"), full_page=True)
    errors = _error_outputs(page)
    assert not errors, f"{name}: error output in the UI: {errors[0][-1500:]}"
    return time.time() - t0


def _images(page) -> list[dict]:
    """Every rendered image of the notebook: its PNG bytes and displayed / natural widths."""
    return page.evaluate("""() => [...document.querySelectorAll('.jp-Notebook .jp-RenderedImage img')].map(i => ({
        src: i.getAttribute('src') || '', shown: i.getBoundingClientRect().width, natural: i.naturalWidth}))""")


def _pixels(img) -> list[tuple]:
    import numpy as np
    return [tuple(int(c) for c in p) for p in np.asarray(img.convert("RGB")).reshape(-1, 3)]


def _coloured_pixels(img) -> int:
    """Pixels whose channels differ by more than 60 (not white, grey or black), counted with numpy: a figure has a
    million pixels, and a Python loop over them took ~5 s."""
    import numpy as np
    rgb = np.asarray(img.convert("RGB"), dtype=np.int16)
    return int(((rgb.max(axis=-1) - rgb.min(axis=-1)) > 60).sum())


def _png(src: str):
    from PIL import Image
    assert src.startswith("data:image/png;base64,"), f"not an inline PNG: {src[:40]}"
    return Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("RGB")


def _check_figures(page, name: str) -> list:
    """Each figure: shown at its natural size, not empty (coloured pixels: lines, markers, cells), every axis
    labelled. Returns the decoded images with their ``recipe:axes`` panels."""
    from PIL import Image
    out = []
    for i, img in enumerate(_images(page)):
        assert img["natural"] > 0 and img["shown"] >= img["natural"] - 1, \
            f"{name}: figure {i} scaled down to {img['shown']:.0f} px of {img['natural']} px"
        raw = base64.b64decode(img["src"].split(",", 1)[1])
        meta = Image.open(io.BytesIO(raw)).text.get("recipe:axes")
        assert meta, f"{name}: figure {i} was not drawn by recipe.reporting.plots (no recipe:axes chunk)"
        panels = json.loads(meta)
        for p in panels:
            assert p["ylabel"], f"{name}: figure {i} panel {p['title']!r} has no y label"
            assert p["colorbar"] or p["xlabel"], f"{name}: figure {i} panel {p['title']!r} has no x label"
        rgb = _png(img["src"])
        coloured = _coloured_pixels(rgb)
        assert coloured >= 30, f"{name}: figure {i} ({[p['title'] for p in panels]}) draws nothing in colour"
        out.append((rgb, panels))
    return out


def _check_tables(page, name: str) -> None:
    """No table sticks out of its output area at this width (a column cut at the edge), none truncated by pandas."""
    tables = page.evaluate("""() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output table')]
        .map(t => { const o = t.closest('.jp-OutputArea-output').getBoundingClientRect();
                    const r = t.getBoundingClientRect();
                    const head = t.querySelector('tr');
                    return {right: r.right, edge: o.right, head: head ? head.innerText.slice(0, 80) : '',
                            cells: [...t.querySelectorAll('td')].map(c => c.innerText)}; })""")
    assert tables, f"{name}: no table rendered"
    for t in tables:
        assert t["right"] <= t["edge"] + 1, f"{name}: table {t['head']!r} is cut: {t['right']:.0f} > {t['edge']:.0f} px"
        cut = [c for c in t["cells"] if c.rstrip().endswith("...")]
        assert not cut, f"{name}: table {t['head']!r} has cells truncated by pandas: {cut[:3]}"


def _check_teacher_marks(figures, run_dir: Path) -> int:
    """The heatmap's teacher marks against their cells in the pixels the browser shows (WCAG AA: 4.5)."""
    from recipe.reporting import plots
    from recipe.runs.layout import RunDir
    heat = [rgb for rgb, panels in figures if any(p["title"].startswith("validation score") for p in panels)]
    assert len(heat) == 1, "the report shows one heatmap"
    fig = plots.plot_heatmap(RunDir(run_dir))
    marks = plots.teacher_mark_boxes(fig)
    w, h = (round(fig.get_figwidth() * plots.DPI), round(fig.get_figheight() * plots.DPI))
    assert heat[0].size == (w, h), "the heatmap in the browser is not the one drawn from this run"
    for m in marks:
        x0, y0, x1, y1 = (int(round(v)) for v in m["box"])
        px = _pixels(heat[0].crop((x0, y0, x1, y1)))
        bg = max(set(px), key=px.count)  # the cell's colour: most of the text box
        readable = [p for p in px if plots.contrast_ratio([c / 255 for c in p], [c / 255 for c in bg]) >= 4.5]
        assert len(readable) >= 8, f"teacher mark of {m['domain']}: {len(readable)} text pixels contrast >= 4.5 " \
                                   f"with its cell {bg}"
    return len(marks)


def _save_as_committed(page, lab, name: str, committed: Path) -> None:
    """Type the parameters cell back to what was committed, save (Ctrl+S) and compare the saved file's bytes."""
    import nbformat
    original = nbformat.read(committed, as_version=4).cells
    params = next(c.source for c in original if "parameters" in c.metadata.get("tags", []))
    path = lab["nbdir"] / name
    before = path.stat().st_mtime_ns
    first = page.locator(".jp-Notebook .jp-CodeCell").first
    first.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(params)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    deadline = time.time() + 60
    while path.stat().st_mtime_ns == before:
        _accept_dialogs(page, name)
        if time.time() > deadline:
            pytest.fail(f"{name}: Ctrl+S did not save within 60 s")
        time.sleep(0.5)
    time.sleep(1.0)  # the atomic write has replaced the file; let a second save (if any) land
    assert path.read_bytes() == committed.read_bytes(), \
        f"{name}: run and saved with its committed parameters, the file differs from the committed one"


def test_notebooks_in_jupyterlab_in_a_real_browser(lab, project_root):
    from playwright.sync_api import sync_playwright
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": VIEW_W, "height": 1000})
            # the report notebook alone: runs every missing phase (widget progress bars), then the heatmap
            # a hang guard only (pytest's --timeout=900 bounds the whole test)
            report_s = _run_all(page, lab, "90_report.ipynb", NOTEBOOK_PARAMS["90_report.ipynb"], 720)
            assert page.locator(".jp-Notebook .widget-progress, .jp-Notebook .jupyter-widget-progress, "
                                ".jp-Notebook .widget-hprogress").count() >= 1, "no widget progress bar rendered"
            assert page.locator(".jp-Notebook .jp-RenderedImage img").count() >= 2, "heatmap / curves not rendered"
            run = lab["work"] / "runs" / RUN_ID
            figures = _check_figures(page, "90_report.ipynb")
            _check_tables(page, "90_report.ipynb")
            assert _check_teacher_marks(figures, run) >= 1, "no teacher marked in the heatmap"
            _save_as_committed(page, lab, "90_report.ipynb", project_root / "notebooks" / "90_report.ipynb")
            assert json.loads((run / "run.json").read_text())["overrides"] == OVERRIDES
            assert not (lab["nbdir"] / "runs").exists(), "the run landed beside the notebooks"
            for name, params in list(NOTEBOOK_PARAMS.items())[1:]:  # each phase notebook, on the same run
                page.close()
                page = browser.new_page(viewport={"width": VIEW_W, "height": 1000})
                # the whole cascade ran in the report notebook; a phase notebook re-runs one phase at most (the
                # data phase's curation, or a skip), so the report's measured time, doubled, bounds it on this load
                _run_all(page, lab, name, params, max(120.0, 2 * report_s))
                if name == "50_eval.ipynb":  # tables, no plot: the results table names the suite
                    assert "tiny_math" in page.locator(".jp-Notebook .jp-OutputArea-output table").first.inner_text()
                    assert (lab["work"] / "runs" / RUN_ID / "eval" / "mopd" / "tiny_math").is_dir()
                else:
                    assert page.locator(".jp-Notebook .jp-RenderedImage img").count() >= 1, f"{name}: no plot rendered"
                _check_figures(page, name)
                _check_tables(page, name)
                _save_as_committed(page, lab, name, project_root / "notebooks" / name)
        finally:
            browser.close()
            print("dialogs accepted:", DIALOGS)
    assert not (lab["nbdir"] / "runs").exists()
