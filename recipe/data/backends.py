"""Execution backends for curation: in-process (tiny profile) and Ray Data (paper profile).

Both run the same row logic (:func:`recipe.data.row_curation.process_batch`) over the same lines (read by
:func:`recipe.data.loaders.iter_lines`) and yield outputs in input order (sources in the order given,
lines in file order), so the stateful steps that follow (dedup, split, pools) give identical results.
The Ray backend makes one Ray Data task per input file (``map_batches`` with a generator UDF that streams
its output batches) and keeps order with ``preserve_order``; outputs cross process boundaries as JSON
strings plus the MinHash signature bytes (records are nested, heterogeneous JSON that Arrow would
reshape). Not covered: splitting a single huge file across tasks (the released configs ship many files).
"""
from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from recipe.data.dedup import SIG_DTYPE
from recipe.data.loaders import Source, iter_lines
from recipe.data.row_curation import RowContext, process_batch


def iter_items(sources: list[Source], counters: dict) -> Iterator[dict]:
    """Raw line items of every source; blank lines are counted in ``counters['blank_lines']``, not rows."""
    for s in sources:
        for fi, f in enumerate(s.files):
            yield from _file_items(s, fi, f, counters)


def _file_items(s: Source, fi: int, f: str, counters: dict) -> Iterator[dict]:
    multi = len(s.files) > 1
    for n, raw in iter_lines(f):
        if not raw.strip():
            counters["blank_lines"] = counters.get("blank_lines", 0) + 1
            continue
        yield {"source": s.name, "file": f, "line": n, "row": f"{fi}-{n}" if multi else n, "raw": raw,
               "fmt": s.fmt, "domain": s.domain, "revision": s.revision, "license": s.license}


def _batched(it: Iterator[dict], n: int) -> Iterator[list[dict]]:
    batch: list[dict] = []
    for x in it:
        batch.append(x)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


def run_inprocess(sources: list[Source], ctx: RowContext, batch_rows: int, counters: dict) -> Iterator[dict]:
    for batch in _batched(iter_items(sources, counters), batch_rows):
        yield from process_batch(batch, ctx)


def _encode(o: dict) -> tuple[str, bytes]:
    sig = o.pop("sig", None) if o["kind"] == "record" else None
    return json.dumps(o, ensure_ascii=False), (np.asarray(sig, dtype=SIG_DTYPE).tobytes() if sig is not None else b"")


def run_ray(sources: list[Source], ctx: RowContext, batch_rows: int, counters: dict,
            num_cpus: int | None = None) -> Iterator[dict]:
    import ray
    import ray.data

    if not ray.is_initialized():
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    tasks = [{"src": si, "file": fi} for si, s in enumerate(sources) for fi in range(len(s.files))]
    if not tasks:
        return

    def udf(batch: dict) -> Iterator[dict]:
        for si, fi in zip(batch["src"].tolist(), batch["file"].tolist()):
            s = sources[si]
            local: dict = {}
            for part in _batched(_file_items(s, fi, s.files[fi], local), batch_rows):
                enc = [_encode(o) for o in process_batch(part, ctx)]
                yield {"payload": [e[0] for e in enc], "sig": [e[1] for e in enc]}
            yield {"payload": [json.dumps({"kind": "_blank", "n": local.get("blank_lines", 0)})], "sig": [b""]}

    dctx = ray.data.DataContext.get_current()
    dctx.execution_options.preserve_order = True
    ds = ray.data.from_items(tasks, override_num_blocks=len(tasks)).map_batches(udf, batch_size=1)
    for b in ds.iter_batches(batch_format="numpy", batch_size=None):
        for payload, sig in zip(b["payload"], b["sig"]):
            o = json.loads(str(payload))
            if o["kind"] == "_blank":
                counters["blank_lines"] = counters.get("blank_lines", 0) + o["n"]
                continue
            if o["kind"] == "record":
                sb = bytes(sig)
                o["sig"] = np.frombuffer(sb, dtype=SIG_DTYPE) if sb else None
            yield o
