"""Parse and apply a model's code edit to a repository held in memory (``{path: text}``), never to disk.

Two formats (agentless SWE, RECIPE.md §4.1 row 7a):

- SEARCH/REPLACE blocks (the Agentless / Aider format); the line before ``<<<<<<< SEARCH`` may name the file,
  otherwise the edit goes to ``default_path``::

      mathops.py
      <<<<<<< SEARCH
          return x + 2
      =======
          return x * 2
      >>>>>>> REPLACE

- a unified diff (``--- a/p`` / ``+++ b/p`` / ``@@`` hunks); hunks are located by their old text (context and
  ``-`` lines), not by line numbers.

Every failure raises ``EditError(reason)`` with a short machine-readable reason (``no_edit``,
``malformed_edit``, ``path_outside_repo``, ``unknown_file``, ``search_not_found``, ``search_ambiguous``), which
the verifier turns into reward 0 with that reason in the metrics. Paths must be relative and stay inside the
repository (no absolute paths, no ``..``).
"""
from __future__ import annotations

import posixpath
import re


class EditError(ValueError):
    def __init__(self, reason: str, message: str = ""):
        super().__init__(message or reason)
        self.reason = reason


_SR = re.compile(r"(?:^|\n)(?:([^\n<>=]*?)\n)?<<<<<<< SEARCH\n(.*?)^=======\n(.*?)^>>>>>>> REPLACE", re.DOTALL | re.MULTILINE)


def safe_path(path: str, files: dict[str, str]) -> str:
    p = path.strip().strip("`").strip()
    if p.startswith(("a/", "b/")) and p[2:] in files:
        p = p[2:]
    norm = posixpath.normpath(p)
    if not p or p.startswith("/") or norm.startswith("..") or "\\" in p or "\x00" in p:
        raise EditError("path_outside_repo", f"edit path {path!r} leaves the repository")
    if norm not in files:
        raise EditError("unknown_file", f"edit path {path!r} is not a file of the repository ({', '.join(sorted(files))})")
    return norm


def _replace_once(text: str, old: str, new: str) -> str:
    if not old.strip():
        raise EditError("malformed_edit", "empty SEARCH text")
    n = text.count(old)
    if n == 0:
        raise EditError("search_not_found", "SEARCH text does not occur in the file")
    if n > 1:
        raise EditError("search_ambiguous", f"SEARCH text occurs {n} times")
    return text.replace(old, new, 1)


def apply_search_replace(text: str, files: dict[str, str], default_path: str | None) -> dict[str, str]:
    blocks = list(_SR.finditer(text))
    if not blocks:
        raise EditError("no_edit", "no SEARCH/REPLACE block")
    out = dict(files)
    for m in blocks:
        name = (m.group(1) or "").strip()
        if name:
            path = safe_path(name, files)
        elif default_path is not None:
            path = default_path
        else:
            raise EditError("malformed_edit", "a SEARCH/REPLACE block without a file name")
        out[path] = _replace_once(out[path], m.group(2), m.group(3))
    return out


def apply_unified_diff(text: str, files: dict[str, str]) -> dict[str, str]:
    out = dict(files)
    lines = text.splitlines()
    i, n_hunks, path = 0, 0, None
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("+++ "):
            path = safe_path(ln[4:].split("\t")[0], files)
        elif ln.startswith("@@"):
            if path is None:
                raise EditError("malformed_edit", "hunk before a +++ file header")
            old, new = [], []
            i += 1
            while i < len(lines) and not lines[i].startswith(("@@", "--- ", "+++ ")):
                h = lines[i]
                if h.startswith("-"):
                    old.append(h[1:])
                elif h.startswith("+"):
                    new.append(h[1:])
                elif h.startswith(" ") or h == "":
                    old.append(h[1:])
                    new.append(h[1:])
                elif h.startswith("\\"):
                    pass
                else:
                    break
                i += 1
            out[path] = _replace_once(out[path], "\n".join(old) + "\n", "\n".join(new) + "\n")
            n_hunks += 1
            continue
        i += 1
    if n_hunks == 0:
        raise EditError("no_edit", "no unified-diff hunk")
    return out


def apply_edit(text: str, files: dict[str, str], default_path: str | None = None) -> tuple[dict[str, str], str]:
    """(edited files, format) for a response text; raises ``EditError``."""
    if "<<<<<<< SEARCH" in text:
        return apply_search_replace(text, files, default_path), "search_replace"
    if re.search(r"^\+\+\+ ", text, re.MULTILINE) and "@@" in text:
        return apply_unified_diff(text, files), "unified_diff"
    raise EditError("no_edit", "neither a SEARCH/REPLACE block nor a unified diff")
