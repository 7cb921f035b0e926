"""docs/ARCHITECTURE.md holds against the code: the imports under recipe/ run down the layers it lists, none runs up
or sideways except those it names (two at most, each with a comment at the import), and no modules import each other
in a cycle. Imports inside functions count as much as those at the top of a module. No module imports another's
private (underscore) name: what two modules share is public, with a docstring, in the module it belongs to."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
MAX_UPWARD = 2


@dataclass(frozen=True)
class Import:
    source: str   # importing module, e.g. recipe.train.rl
    target: str   # imported module of recipe, e.g. recipe.runs.teachers
    path: Path
    line: int
    name: str | None = None  # the name taken from it by ``from ... import name``; None for ``import recipe.x``


def module_files(root: Path) -> dict[str, Path]:
    """{dotted module name: file} for every module of the package under ``root / "recipe"``."""
    out = {}
    for p in sorted((root / "recipe").rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module an imported name lives in: the longest prefix of ``name`` that is a module of the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def read_imports(modules: dict[str, Path]) -> list[Import]:
    """Every import of a recipe module by another, wherever it stands in the file (top level, function, branch)."""
    out = []
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the importing module's package, up level-1 packages
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[:len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                names = [(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base, a.name) for a in node.names]
            else:
                continue
            for name, taken in names:
                if name == "recipe" or name.startswith("recipe."):
                    target = _resolve(name, modules)
                    if target and target != mod:
                        out.append(Import(mod, target, path, node.lineno, taken))
    return out


def is_private(name: str) -> bool:
    """``_helper`` is private to its module; ``__version__`` and other dunder names are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(imports: list[Import], root: Path) -> list[str]:
    return [f"{i.path.relative_to(root)}:{i.line}: {i.source} imports {i.name} from {i.target}"
            for i in imports if i.name is not None and is_private(i.name)]


def package_of(module: str) -> str:
    """recipe.train.rl -> train; recipe.seeding -> seeding (a module directly under recipe/ is a package here)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "recipe"


def doc_layers(text: str) -> list[list[str]]:
    """The numbered layer list of ARCHITECTURE.md's "## Layers", top first: each item's package names are the
    backquoted words before its first colon."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        m = re.match(r"^(\d+)\.\s+((?:`\w+`(?:,\s*)?)+):", line)
        if m:
            assert int(m.group(1)) == len(layers) + 1, f"ARCHITECTURE.md: layer {m.group(1)} is out of order"
            layers.append(re.findall(r"`(\w+)`", m.group(2)))
    return layers


def doc_exceptions(text: str) -> dict[tuple[str, str], str]:
    """{(importing file, imported module): reason} from "## Imports that run upward"."""
    section = text.split("## Imports that run upward", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        m = re.match(r"^- `(recipe/\S+\.py)` -> `(recipe[\w.]*)`: (.+)$", line)
        if m:
            out[(m.group(1), m.group(2))] = m.group(3).strip()
    return out


def layer_violations(imports: list[Import], layers: list[list[str]], exceptions: dict, root: Path) -> list[str]:
    rank = {p: i for i, layer in enumerate(layers) for p in layer}
    bad = []
    for imp in imports:
        a, b = package_of(imp.source), package_of(imp.target)
        if a == b or "recipe" in (a, b):
            continue
        if rank[a] >= rank[b] and (imp.path.relative_to(root).as_posix(), imp.target) not in exceptions:
            where = "beside it in layer" if rank[a] == rank[b] else "above it, in layer"
            bad.append(f"{imp.path.relative_to(root)}:{imp.line}: {imp.source} (layer {rank[a] + 1}, {a}) imports "
                       f"{imp.target}, {where} {rank[b] + 1} ({b})")
    return bad


def cycles(imports: list[Import]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.source, set()).add(imp.target)
        graph.setdefault(imp.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def code():
    modules = module_files(ROOT)
    return modules, read_imports(modules)


@pytest.fixture(scope="module")
def doc():
    text = DOC.read_text(encoding="utf-8")
    return doc_layers(text), doc_exceptions(text)


def test_the_layer_list_names_every_package_once(code, doc):
    modules, _ = code
    layers, _ = doc
    listed = [p for layer in layers for p in layer]
    assert len(layers) >= 2, "ARCHITECTURE.md: no numbered layer list under '## Layers'"
    assert len(listed) == len(set(listed)), f"ARCHITECTURE.md names a package twice: {sorted(listed)}"
    packages = {package_of(m) for m in modules} - {"recipe"}
    only_doc, only_code = sorted(set(listed) - packages), sorted(packages - set(listed))
    assert not only_doc and not only_code, f"ARCHITECTURE.md lists only {only_doc}; recipe/ has only {only_code}"


def test_imports_run_down_the_layers(code, doc):
    modules, imports = code
    layers, exceptions = doc
    assert len(exceptions) <= MAX_UPWARD, \
        f"ARCHITECTURE.md allows {len(exceptions)} upward imports (at most {MAX_UPWARD})"
    bad = layer_violations(imports, layers, exceptions, ROOT)
    assert not bad, "imports that run up or sideways (move the shared code down, or list it in ARCHITECTURE.md):\n" + \
        "\n".join(bad)
    for (file, target), reason in exceptions.items():
        hits = [i for i in imports if i.path == ROOT / file and i.target == target]
        assert hits, f"ARCHITECTURE.md allows {file} -> {target}, which the code no longer has: strike it"
        for i in hits:
            line = i.path.read_text(encoding="utf-8").splitlines()[i.line - 1]
            assert "#" in line, f"{file}:{i.line}: an allowed upward import carries a one-line reason comment"


def test_no_import_cycles(code):
    _, imports = code
    found = cycles(imports)
    assert not found, "modules that import each other:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_module_imports_a_private_name_of_another(code):
    _, imports = code
    bad = private_imports(imports, ROOT)
    assert not bad, "private names used outside their module (make the name public, or move it where it " \
        "belongs):\n" + "\n".join(bad)


def test_the_checks_see_a_private_import(tmp_path):
    """An underscore name taken from another module is reported, absolute or relative, at the top or in a function;
    a dunder name and names from outside the package are not."""
    pkg = tmp_path / "recipe" / "low"
    pkg.mkdir(parents=True)
    for f in (tmp_path / "recipe" / "__init__.py", pkg / "__init__.py"):
        f.write_text("")
    (pkg / "a.py").write_text("_x = 1\n__all__ = []\n")
    (pkg / "b.py").write_text("from __future__ import annotations\nfrom os import _exit\n"
                              "from recipe.low.a import __all__\nfrom .a import _x\n")
    (pkg / "c.py").write_text("def f():\n    from recipe.low.a import _x as y\n")
    bad = private_imports(read_imports(module_files(tmp_path)), tmp_path)
    assert bad == ["recipe/low/b.py:4: recipe.low.b imports _x from recipe.low.a",
                   "recipe/low/c.py:2: recipe.low.c imports _x from recipe.low.a"]


def test_the_checks_see_a_bad_import(tmp_path):
    """The reader finds imports inside functions and relative ones, and the checks flag an upward import and a
    cycle (a package written here: a low layer importing a high one inside a function, and two modules in a loop)."""
    pkg = tmp_path / "recipe"
    for d in ("low", "high"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "high" / "a.py").write_text("from recipe.low import b\n")
    (pkg / "low" / "b.py").write_text("def f():\n    from recipe.high.a import x\n")
    (pkg / "low" / "c.py").write_text("from . import d\n")
    (pkg / "low" / "d.py").write_text("import recipe.low.c\n")
    modules = module_files(tmp_path)
    imports = read_imports(modules)
    assert {(i.source, i.target) for i in imports} == {
        ("recipe.high.a", "recipe.low.b"), ("recipe.low.b", "recipe.high.a"),
        ("recipe.low.c", "recipe.low.d"), ("recipe.low.d", "recipe.low.c")}
    layers = doc_layers("## Layers\n\n1. `high`: top\n2. `low`: ground\n")
    assert layers == [["high"], ["low"]]
    bad = layer_violations(imports, layers, {}, tmp_path)
    assert len(bad) == 1 and "recipe.low.b (layer 2, low) imports recipe.high.a" in bad[0]
    assert layer_violations(imports, layers, {("recipe/low/b.py", "recipe.high.a"): "why"}, tmp_path) == []
    assert sorted(cycles(imports)) == [["recipe.high.a", "recipe.low.b"], ["recipe.low.c", "recipe.low.d"]]
