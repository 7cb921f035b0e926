"""What ``notebooks/05_hub_download.ipynb`` calls: download the releases, then look inside them.

``download_released`` never raises for an unreachable Hub: it returns, per artifact, either the download
manifest or a plain statement of why nothing was downloaded (the notebook prints it), so the notebook
runs to the end offline. Missing/gated repos are reported the same way. Inspection reads local files
only: the model's config and chat template, and the first rows of every downloaded data config.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recipe.hub.download import MANIFEST_NAME, configured_revision, default_local_dir, download_artifact
from recipe.hub.hub_errors import HubError, HubUnreachableError, current_endpoint, public_endpoint


def download_released(profile: str = "tiny", artifacts=("released-model", "sft-data", "rl-data"),
                      overrides: list[str] | None = None, progress: bool = True) -> dict[str, dict[str, Any]]:
    """{artifact: {"ok": True, "manifest": ..., "dir": ...} | {"ok": False, "reason": ...}}."""
    from recipe.config import load_config

    cfg = load_config(profile, overrides=list(overrides or []))
    section = cfg.hub
    out: dict[str, dict[str, Any]] = {}
    for name in artifacts:
        art = section.artifact(name)
        target = default_local_dir(section, art)
        try:
            manifest = download_artifact(section, name, revision=configured_revision(cfg, name), progress=progress)
            out[name] = {"ok": True, "unreachable": False, "dir": str(target), "manifest": manifest}
        except HubUnreachableError as e:
            out[name] = {"ok": False, "unreachable": True, "dir": str(target), "reason": str(e)}
        except HubError as e:
            out[name] = {"ok": False, "unreachable": False, "dir": str(target), "reason": str(e)}
    return out


def summary_table(results: dict[str, dict[str, Any]]):
    import pandas as pd

    rows = []
    for name, r in results.items():
        m = r.get("manifest") or {}
        rows.append({"artifact": name, "downloaded": r["ok"], "repo": m.get("repo_id"),
                     "resolved_commit": (m.get("resolved_commit") or "")[:12], "pinned": m.get("pinned"),
                     "subsets": m.get("subsets"),
                     "files": len(m.get("files", [])), "MB": round(m.get("total_bytes", 0) / 2**20, 2),
                     "note": "" if r["ok"] else r["reason"]})
    return pd.DataFrame(rows)


def hub_status_line(results: dict[str, dict[str, Any]]) -> str:
    failed = {k: v["reason"] for k, v in results.items() if not v["ok"]}
    if not failed:
        return f"All {len(results)} artifacts downloaded from {public_endpoint(current_endpoint())}."
    if all(results[k]["unreachable"] for k in failed):
        return (f"The Hugging Face Hub ({public_endpoint(current_endpoint())}) cannot be reached from this machine: "
                f"nothing was downloaded for {', '.join(failed)}. The cells below show only what is already on disk.")
    return "Some downloads failed: " + "; ".join(f"{k}: {v}" for k, v in failed.items())


def inspect_model(model_dir: str | Path) -> dict[str, Any]:
    """Architecture facts from config.json and the chat template (first lines), read from disk."""
    d = Path(model_dir)
    if not (d / "config.json").is_file():
        return {"available": False, "why": f"{d}/config.json not on disk (download released-model first)"}
    cfg = json.loads((d / "config.json").read_text())
    keys = ["model_type", "architectures", "hidden_size", "num_hidden_layers", "hybrid_override_pattern",
            "num_attention_heads", "num_key_value_heads", "n_routed_experts", "num_experts_per_tok",
            "vocab_size", "max_position_embeddings", "torch_dtype"]
    template = None
    if (d / "chat_template.jinja").is_file():
        template = (d / "chat_template.jinja").read_text()
    elif (d / "tokenizer_config.json").is_file():
        template = json.loads((d / "tokenizer_config.json").read_text()).get("chat_template")
    return {"available": True, "config": {k: cfg[k] for k in keys if k in cfg},
            "chat_template_head": "\n".join((template or "").splitlines()[:25]) or None,
            "thinking_mode_in_template": bool(template and "think" in template)}


def preview_rows(data_dir: str | Path, n: int = 3, width: int = 160) -> dict[str, Any]:
    """{config: DataFrame of its first ``n`` rows} for every ``<config>/*.jsonl`` on disk (long text cut)."""
    import pandas as pd

    d = Path(data_dir)
    out: dict[str, Any] = {}
    for f in sorted(d.glob("*/*.jsonl")):
        rows = []
        with open(f) as fh:
            for line in fh:
                if line.strip():
                    rows.append({k: (json.dumps(v) if not isinstance(v, str) else v)[:width]
                                 for k, v in json.loads(line).items()})
                if len(rows) >= n:
                    break
        out.setdefault(f.parent.name, pd.DataFrame(rows))
    return out


def manifest_of(local_dir: str | Path) -> dict | None:
    p = Path(local_dir) / MANIFEST_NAME
    return json.loads(p.read_text()) if p.exists() else None
