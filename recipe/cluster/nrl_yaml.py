"""Load NeMo-RL YAML configs the way NeMo-RL v0.7.0 does, without OmegaConf.

NeMo-RL (``nemo_rl/utils/config.py`` at v0.7.0) reads YAML with OmegaConf, resolves a top-level ``defaults:``
key (one path or a list, relative to the file that holds it; ``/``-absolute paths as is), merges parents in
order and the child last (mappings deep-merge, lists and scalars are replaced whole, a mapping carrying
``_override_: true`` replaces instead of merging), then resolves ``${...}`` interpolations with the resolvers
``mul``, ``div``, ``max`` (plus OmegaConf's ``oc.env``); ``_override_`` is honoured on top-level keys only. These rules are NeMo-RL's
``load_config`` / ``merge_with_override`` (``nemo_rl/utils/config.py`` at v0.7.0, docs/NEMO_RL.md); this module re-implements exactly them so that the rendered
configs can be checked on a machine where NeMo-RL cannot be installed. OmegaConf itself is not used because
its pinned ANTLR runtime (4.9) conflicts with the one math-verify needs (4.13).

Covered: OmegaConf's YAML float rule (``1e-5`` is a float, PyYAML alone reads a string), ``<<`` merge keys,
absolute and relative (``${..x}``) references, nested resolvers, string interpolation
(``"tb-${a.b}"``), ``defaults:`` chains, top-level ``_override_``. Not covered: OmegaConf struct-mode errors
on command-line overrides, custom resolvers added after v0.7.0 (e.g. ``add``: loading such a file raises, as the
v0.7.0 loader would). ``???`` values load as the string; ``recipe.cluster.config_checks`` refuses them.
"""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import yaml

__all__ = [
    "ConfigError", "load_yaml", "load_with_defaults", "merge", "resolve", "flatten_keys", "get_path",
    "dump_yaml",
]


class ConfigError(ValueError):
    """A NeMo-RL config cannot be loaded or resolved; the message names the file/key."""


# OmegaConf's float rule (omegaconf/_utils.py: get_yaml_loader): exponent without a dot is a float.
_FLOAT_RE = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _OmegaLoader(yaml.SafeLoader):
    """SafeLoader with OmegaConf's float resolver instead of YAML 1.1's (``<<`` merge keys stay supported)."""


_OmegaLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:float"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.copy().items()
}
_OmegaLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_RE, list("-+0123456789."))


def load_yaml(path_or_text: Path | str) -> Any:
    """Parse one YAML file (a Path) or YAML text (a str) with OmegaConf's scalar rules."""
    text = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    return yaml.load(text, Loader=_OmegaLoader)


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(obj: Any) -> str:
    """YAML text that :func:`load_yaml` reads back to ``obj`` (floats keep a dot or exponent)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def _deep_merge(base: Any, child: Any) -> Any:
    """OmegaConf.merge: child wins, mappings deep-merge, lists and scalars are replaced whole."""
    if isinstance(child, Mapping):
        if not isinstance(base, Mapping):
            return {k: _deep_merge(None, v) for k, v in child.items()}
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for k, v in child.items():
            out[k] = _deep_merge(out.get(k), v)
        return out
    return copy.deepcopy(child)


def merge(base: Any, child: Any) -> Any:
    """NeMo-RL v0.7.0's ``merge_with_override`` (``nemo_rl/utils/config.py``): a *top-level* mapping of the child
    holding ``_override_: true`` replaces the parent's mapping (marker removed); everything else is OmegaConf.merge.
    ``_override_`` deeper down is NOT honoured there: it stays an ordinary key and the mapping deep-merges, so
    this function keeps it too (the validator then reports it)."""
    if not isinstance(child, Mapping):
        return copy.deepcopy(child)
    base = dict(base) if isinstance(base, Mapping) else {}
    child = dict(child)
    for key, val in list(child.items()):
        if isinstance(val, Mapping) and val.get("_override_", False):
            child[key] = {k: v for k, v in val.items() if k != "_override_"}
            base.pop(key, None)
    return _deep_merge(base, child)


PathResolver = Callable[[Path, str], Path]


def _default_resolver(current: Path, ref: str) -> Path:
    ref_path = Path(ref)
    return ref_path if ref_path.is_absolute() else (current.parent / ref_path)


def load_with_defaults(path: Path, *, resolve_path: PathResolver = _default_resolver, _seen: tuple = ()) -> dict:
    """Load ``path`` and its ``defaults:`` chain into one unresolved mapping (interpolations kept).

    ``resolve_path(current_file, ref)`` maps a ``defaults:`` entry to a file; the default resolves relative to
    the containing file as NeMo-RL does. Tests pass a resolver that maps the release's original paths onto a
    flattened fixture directory or a checkout.
    """
    path = Path(path)
    if path in _seen:
        raise ConfigError(f"defaults cycle: {' -> '.join(map(str, _seen + (path,)))}")
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping, got {type(data).__name__}")
    parents = data.pop("defaults", None)
    if parents is None:
        return data
    if isinstance(parents, str):
        parents = [parents]
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise ConfigError(f"{path}: defaults must be a path or a list of paths, got {parents!r}")
    merged: Any = {}
    for ref in parents:
        parent_file = resolve_path(path, ref)
        merged = merge(merged, load_with_defaults(parent_file, resolve_path=resolve_path, _seen=_seen + (path,)))
    return merge(merged, data)


# ---------------------------------------------------------------- interpolation
_RESOLVERS: dict[str, Callable[..., Any]] = {
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "max": lambda *xs: max(xs),
}


def _split_args(text: str) -> list[str]:
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "{" and cur.endswith("$"):
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip() or args:
        args.append(cur.strip())
    return args


def _find_interpolations(s: str) -> Iterator[tuple[int, int]]:
    i = 0
    while True:
        start = s.find("${", i)
        if start < 0:
            return
        depth, j = 0, start
        while j < len(s):
            if s.startswith("${", j):
                depth += 1
                j += 2
                continue
            if s[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if depth:
            raise ConfigError(f"unbalanced interpolation in {s!r}")
        yield start, j + 1
        i = j + 1


def get_path(cfg: Any, dotted: str | list[str]) -> Any:
    """``cfg['a']['b']`` for ``'a.b'``; raises KeyError naming the missing part."""
    parts = dotted.split(".") if isinstance(dotted, str) else dotted
    node = cfg
    for i, p in enumerate(parts):
        if not isinstance(node, Mapping) or p not in node:
            raise KeyError(".".join(parts[: i + 1]))
        node = node[p]
    return node


class _Resolver:
    def __init__(self, root: dict, env: Mapping[str, str]):
        self.root, self.env, self.active = root, env, set()

    def value(self, node: Any, where: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            return {k: self.value(v, where + (k,)) for k, v in node.items()}
        if isinstance(node, list):
            return [self.value(v, where + (str(i),)) for i, v in enumerate(node)]
        if isinstance(node, str) and "${" in node:
            return self.string(node, where)
        return node

    def string(self, s: str, where: tuple[str, ...]) -> Any:
        spans = list(_find_interpolations(s))
        if len(spans) == 1 and spans[0] == (0, len(s)):
            return self.expr(s[2:-1], where)
        out, last = "", 0
        for a, b in spans:
            out += s[last:a] + str(self.expr(s[a + 2 : b - 1], where))
            last = b
        return out + s[last:]

    def arg(self, a: str, where: tuple[str, ...]) -> Any:
        if "${" in a:
            return self.string(a, where)
        v = load_yaml(a) if a else ""
        return v

    def expr(self, e: str, where: tuple[str, ...]) -> Any:
        e = e.strip()
        m = re.match(r"^([A-Za-z_][\w.]*):(.*)$", e, re.S)
        if m:
            name, rest = m.group(1), m.group(2)
            args = [self.arg(a, where) for a in _split_args(rest)]
            if name == "oc.env":
                key = args[0]
                if key in self.env:
                    return self.env[key]
                if len(args) > 1:
                    return args[1]
                raise ConfigError(f"{'.'.join(where)}: environment variable {key!r} is not set")
            if name not in _RESOLVERS:
                raise ConfigError(f"{'.'.join(where)}: unknown resolver {name!r} (NeMo-RL v0.7.0 registers "
                                  f"{sorted(_RESOLVERS)} and oc.env)")
            return _RESOLVERS[name](*args)
        return self.ref(e, where)

    def ref(self, ref: str, where: tuple[str, ...]) -> Any:
        if ref.startswith("."):
            ups = len(ref) - len(ref.lstrip("."))
            base = list(where[:-1])  # the node that holds the interpolating key
            base = base[: len(base) - (ups - 1)] if ups > 1 else base
            parts = base + ref.lstrip(".").split(".")
        else:
            parts = ref.split(".")
        key = ".".join(parts)
        if key in self.active:
            raise ConfigError(f"interpolation cycle at {key}")
        try:
            target = get_path(self.root, parts)
        except KeyError as exc:
            raise ConfigError(f"{'.'.join(where)}: interpolation ${{{ref}}} points to missing key {exc.args[0]}") from None
        self.active.add(key)
        try:
            return self.value(target, tuple(parts))
        finally:
            self.active.discard(key)


def resolve(cfg: dict, env: Mapping[str, str] | None = None) -> dict:
    """Return a copy of ``cfg`` with every ``${...}`` interpolation resolved (raises ConfigError)."""
    return _Resolver(cfg, os.environ if env is None else env).value(cfg, ())


def flatten_keys(cfg: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted path -> leaf value. Empty mappings are leaves; lists are leaves (NeMo-RL replaces them whole)."""
    out: dict[str, Any] = {}
    if isinstance(cfg, Mapping) and cfg:
        for k, v in cfg.items():
            out.update(flatten_keys(v, f"{prefix}.{k}" if prefix else str(k)))
    elif prefix:
        out[prefix] = cfg
    return out
