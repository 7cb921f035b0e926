"""LaTeX in notebook markdown as images a page carries itself, so ``make docs``'s HTML reads offline (no MathJax from
a CDN). Matplotlib's mathtext draws each ``$$...$$`` / ``$...$`` as an SVG embedded as a data URI, the TeX kept as
its alt text; a formula mathtext cannot draw is shown as its TeX source in a code span (readable, never dropped).
"""
from __future__ import annotations

import base64
import html
import io
import re

# TeX that MathJax reads and mathtext does not, mapped to what mathtext draws the same way
_MATHTEXT_EQUIVALENTS = [(r"\Big[", r"\left["), (r"\Big]", r"\right]"), (r"\big[", "["), (r"\big]", "]"),
                         (r"\tfrac", r"\frac"), (r"\mathbb{1}", r"\mathbf{1}")]
_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?\1")
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
# inline math: $...$ that starts and ends beside non-space and reads as TeX (a backslash, _ , ^ or =), so prose such
# as "$RECIPE_BENCHMARK_MIRROR or $5" is left alone
_INLINE = re.compile(r"(?<![\\$\w])\$(?=\S)([^$\n]*?[\\_^=][^$\n]*?)(?<=\S)\$(?![\w$])")


def tex_to_svg(tex: str, size: float = 13.0) -> str | None:
    """The SVG mathtext draws for ``tex`` (no ``$``), or None when it cannot parse it."""
    import matplotlib
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties
    for old, new in _MATHTEXT_EQUIVALENTS:
        tex = tex.replace(old, new)
    buf = io.BytesIO()
    try:
        with matplotlib.rc_context({"mathtext.fontset": "cm", "svg.hashsalt": "math"}):
            mathtext.math_to_image(f"${' '.join(tex.split())}$", buf, format="svg", prop=FontProperties(size=size))
    except (ValueError, RuntimeError):
        return None
    return re.sub(r"<metadata>.*?</metadata>", "", buf.getvalue().decode(), flags=re.S)  # no date: same page twice


def _img(tex: str, display: bool) -> str:
    svg = tex_to_svg(tex)
    if svg is None:
        code = f"<code>{html.escape(tex.strip())}</code>"
        return f'<p class="math">{code}</p>' if display else code
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    img = f'<img class="math" alt="{html.escape(tex.strip())}" src="{uri}" style="vertical-align:middle">'
    return f'<p class="math" style="text-align:center">{img}</p>' if display else img


def render_math(markdown: str) -> str:
    """``markdown`` with each formula outside code spans replaced by its embedded image (raw HTML, which markdown
    passes through)."""
    parts, last = [], 0
    for m in _CODE_SPAN.finditer(markdown):
        parts += [_render_prose(markdown[last:m.start()]), m.group(0)]
        last = m.end()
    parts.append(_render_prose(markdown[last:]))
    return "".join(parts)


def _render_prose(text: str) -> str:
    text = _DISPLAY.sub(lambda m: "\n\n" + _img(m.group(1), True) + "\n\n", text)
    return _INLINE.sub(lambda m: _img(m.group(1), False), text)


def render_notebook_math(nb) -> None:
    """In place: markdown cells and markdown outputs (the phase notebooks display their objective as markdown)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = render_math(cell.source)
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if "text/markdown" in data:
                text = data["text/markdown"]
                data["text/markdown"] = render_math("".join(text) if isinstance(text, list) else text)
