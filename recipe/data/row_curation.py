"""Row-level curation logic: bytes of one line -> normalized record (or quarantine entry), plus the
stateless checks (decontamination, dedup key, MinHash signature). One implementation for both backends:
the in-process backend calls :func:`process_batch` directly, the Ray Data backend calls it inside
``map_batches`` on workers (``recipe.data.backends``).

Quarantine reasons: ``too_long`` (bytes or message count over the limits),
``invalid_utf8``, ``malformed_json``, ``wrong_type``, ``missing_field``, ``empty_messages`` (no messages, or
every turn empty), ``unknown_format``, ``invalid_record`` (fails the record validator), ``parse_error``
(any other exception while reading the row: reported, never raised).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from recipe.data.decontam import NgramIndex
from recipe.data.dedup import minhash_signatures
from recipe.data.formats import RowError, normalize_row
from recipe.data.formats.nemo_gym import native_id
from recipe.data.record import RecordError, record_text
from recipe.data.text import exact_key, prompt_key


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


@dataclass
class RowContext:
    """Everything the row logic needs; picklable, so Ray ships it to workers."""
    max_row_bytes: int
    max_messages: int
    index: NgramIndex | None = None
    min_overlap: int = 1
    decontam_fields: str = "all"
    near: bool = True
    num_perm: int = 128
    shingle_words: int = 5


def _quarantine(item: dict, reason: str, detail: str, rid: str | None = None) -> dict:
    return {"kind": "quarantine", "id": rid or f"{item['source']}:row{item['row']}", "source": item["source"],
            "file": item.get("file"), "line": item["line"], "reason": reason, "detail": detail[:500]}


def parse_item(item: dict, max_row_bytes: int, max_messages: int) -> dict:
    """One raw line ``item`` (keys: source, file, line, row, raw, fmt, domain, revision, license) -> an output dict."""
    raw: bytes = item["raw"]
    if len(raw) > max_row_bytes:
        return _quarantine(item, "too_long", f"{len(raw)} bytes > limits.max_row_bytes={max_row_bytes}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return _quarantine(item, "invalid_utf8", f"byte {e.start}: {e.reason}")
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return _quarantine(item, "invalid_utf8", "JSON escape of a lone UTF-16 surrogate (not valid Unicode)")
        except (json.JSONDecodeError, RecursionError):
            pass  # reported as malformed_json below
    try:
        row = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        return _quarantine(item, "malformed_json", getattr(e, "msg", str(e)) + f" at char {getattr(e, 'pos', '?')}")
    nid = native_id(row) if isinstance(row, dict) else None
    qid = f"{item['source']}:{nid}" if nid is not None else None
    try:
        rec = normalize_row(row, item["fmt"], source_name=item["source"], revision=item.get("revision"),
                            license=item.get("license"), row_index=item["row"], domain=item.get("domain"))
    except RowError as e:
        return _quarantine(item, e.reason, e.detail, qid)
    except RecordError as e:
        return _quarantine(item, "invalid_record", str(e), qid)
    except Exception as e:  # noqa: BLE001 - a bad row must never stop curation; it is reported instead
        return _quarantine(item, "parse_error", f"{type(e).__name__}: {e}", qid)
    msgs = rec["messages"]
    if len(msgs) > max_messages:
        return _quarantine(item, "too_long", f"{len(msgs)} messages > limits.max_messages={max_messages}", rec["id"])
    if not record_text(rec).strip() and not any(m.get("tool_calls") for m in msgs):
        return _quarantine(item, "empty_messages", "every message has empty content", rec["id"])
    return {"kind": "record", "record": rec, "source": item["source"], "file": item.get("file"), "line": item["line"]}


def process_batch(items: list[dict], ctx: RowContext) -> list[dict]:
    """Parse, decontamination-check, dedup-key and sign a batch of raw lines; same order out as in."""
    out = [parse_item(it, ctx.max_row_bytes, ctx.max_messages) for it in items]
    recs = [o for o in out if o["kind"] == "record"]
    if not recs:
        return out
    if ctx.index is not None and len(ctx.index.hashes):
        hits = ctx.index.check_batch([record_text(o["record"], fields=ctx.decontam_fields) for o in recs],
                                     ctx.min_overlap)
    else:
        hits = [None] * len(recs)
    texts = [record_text(o["record"]) for o in recs]
    sigs: list[Any] = [None] * len(recs)
    if ctx.near:
        todo = [i for i, h in enumerate(hits) if h is None]
        for i, s in zip(todo, minhash_signatures([texts[i] for i in todo], num_perm=ctx.num_perm,
                                                 shingle_words=ctx.shingle_words)):
            sigs[i] = np.asarray(s)
    for o, h, s in zip(recs, hits, sigs):
        o["contaminated_by"] = h
        o["key"] = exact_key(o["record"])
        o["prompt_key"] = prompt_key(o["record"])
        o["sig"] = s
    return out
