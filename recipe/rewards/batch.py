"""``verify_batch``: score many (record, response) pairs in process, in a local worker pool, or on Ray.

- In process (default for batches below ``POOL_THRESHOLD``): cheapest for the tiny trainer's ~512 short
  responses per step; math-verify runs in the main thread with a ``SIGALRM`` limit.
- Local pool (``workers=N`` > 1, or big batches): a ``ProcessPoolExecutor`` (``forkserver`` start, so no
  trainer threads or CUDA state are forked) over contiguous chunks; each worker runs ``verify``. The pool
  stays alive between calls (``shutdown_pools()`` or interpreter exit ends it).
- Ray (``ray_address`` given): the same chunks as Ray tasks (``ray.init(address=...)`` if Ray is not up),
  how the paper spreads 2,048 code executions per step over hundreds of CPU cores (RECIPE.md stage 6).
Unknown verifier names raise before any scoring; a worker that dies scores its chunk 0 with
``error:WorkerCrashed``; the result list always has one entry per input (scored == given).
"""
from __future__ import annotations

import atexit
import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Sequence

from recipe.rewards.core import verifier_name, verify
from recipe.rewards.verifier_registry import get_verifier
from recipe.rewards.result import VerifierResult, fail

POOL_THRESHOLD = 4096
_CHUNK = 64


def _score_chunk(pairs: list[tuple[Any, Any]]) -> list[dict]:
    return [verify(rec, resp).to_dict() for rec, resp in pairs]


def _chunks(pairs: list, size: int) -> list[list]:
    return [pairs[i : i + size] for i in range(0, len(pairs), size)]


def verify_batch(records: Sequence[dict], responses: Sequence[Any], *, workers: int | None = None,
                 ray_address: str | None = None, chunk_size: int = _CHUNK, pool_threshold: int | None = None,
                 math_timeout_s: float | None = None, sandbox_threads: int | None = None) -> list[VerifierResult]:
    """One result per (record, response); see the module docstring for where the work runs.

    ``pool_threshold`` (default ``POOL_THRESHOLD``) is the batch size from which a local pool is used when
    ``workers`` is None; ``math_timeout_s`` sets the math check limit for records that do not set one.
    ``sandbox_threads`` (default: the CPU count, at least 2) is how many sandboxed verifications (code, SWE) run at
    once in process. The config section ``verify`` carries all of these (``recipe.config.verify_section``).
    """
    if len(records) != len(responses):
        raise ValueError(f"verify_batch got {len(records)} records but {len(responses)} responses; pass one response per record")
    for name in {verifier_name(r) for r in records} - {None}:
        fn = get_verifier(name)  # config errors first, before any rollout is scored
        if getattr(fn, "per_response", True) is False:
            fn({}, None)  # raises its explanation (e.g. pairwise_judge rows need a judge, not verify)
    if math_timeout_s is not None:
        records = [_with_math_timeout(r, math_timeout_s) for r in records]
    pairs = list(zip(records, responses))
    if not pairs:
        return []
    if ray_address:
        return _run_ray(pairs, ray_address, chunk_size)
    threshold = pool_threshold if pool_threshold is not None else POOL_THRESHOLD
    n = workers if workers is not None else (min(os.cpu_count() or 1, 32) if len(pairs) >= threshold else 1)
    if n <= 1:
        return _run_in_process(pairs, sandbox_threads)
    return _run_pool(pairs, n, chunk_size)


def _run_in_process(pairs: list, threads: int | None) -> list[VerifierResult]:
    """In process; responses whose verifier runs them in the sandbox (``fn.sandboxed``) go through a thread pool:
    each sandbox run is a child process the thread only waits on, so N runs overlap (the sandbox pool)."""
    sandboxed = [i for i, (rec, _) in enumerate(pairs)
                 if verifier_name(rec) and getattr(get_verifier(verifier_name(rec)), "sandboxed", False)]
    n_threads = threads if threads is not None else max(2, os.cpu_count() or 1)
    if len(sandboxed) < 2 or n_threads <= 1:
        return [verify(rec, resp) for rec, resp in pairs]
    out: list[VerifierResult | None] = [None] * len(pairs)
    with ThreadPoolExecutor(max_workers=min(n_threads, len(sandboxed))) as ex:
        for i, r in zip(sandboxed, ex.map(lambda i: verify(*pairs[i]), sandboxed)):
            out[i] = r
    for i, (rec, resp) in enumerate(pairs):
        if out[i] is None:
            out[i] = verify(rec, resp)
    return out  # type: ignore[return-value]


def _with_math_timeout(record: Any, seconds: float) -> Any:
    spec = record.get("verifier") if isinstance(record, dict) else None
    if isinstance(spec, dict) and spec.get("name") == "math" and "timeout_s" not in spec:
        return {**record, "verifier": {**spec, "timeout_s": seconds}}
    return record


_POOLS: dict[int, ProcessPoolExecutor] = {}


def _pool(workers: int) -> ProcessPoolExecutor:
    """A pool kept alive across calls (the trainer scores every step; worker start-up costs ~1 s)."""
    ex = _POOLS.get(workers)
    if ex is None:
        ex = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("forkserver"))
        _POOLS[workers] = ex
    return ex


def shutdown_pools() -> None:
    for ex in _POOLS.values():
        ex.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


atexit.register(shutdown_pools)


def _run_pool(pairs: list, workers: int, chunk_size: int) -> list[VerifierResult]:
    chunks = _chunks(pairs, max(1, min(chunk_size, -(-len(pairs) // workers))))
    out: list[VerifierResult] = []
    ex = _pool(workers)
    try:
        futures = [ex.submit(_score_chunk, c) for c in chunks]
    except BrokenProcessPool:
        _POOLS.pop(workers, None)
        ex = _pool(workers)
        futures = [ex.submit(_score_chunk, c) for c in chunks]
    broken = False
    for c, f in zip(chunks, futures):
        try:
            out.extend(VerifierResult.from_dict(d) for d in f.result())
        except Exception as e:  # noqa: BLE001 - BrokenProcessPool, unpicklable input …
            broken = broken or isinstance(e, BrokenProcessPool)
            out.extend(fail("error:WorkerCrashed", error=f"{type(e).__name__}: {e}"[:300]) for _ in c)
    if broken:
        _POOLS.pop(workers, None)
    return out


def _run_ray(pairs: list, address: str, chunk_size: int) -> list[VerifierResult]:
    import ray

    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(_score_chunk)
    chunks = _chunks(pairs, chunk_size)
    refs = [remote.remote(c) for c in chunks]
    out: list[VerifierResult] = []
    for c, ref in zip(chunks, refs):
        try:
            out.extend(VerifierResult.from_dict(d) for d in ray.get(ref))
        except Exception as e:  # noqa: BLE001 - a lost task scores its chunk 0, the batch goes on
            out.extend(fail("error:WorkerCrashed", error=f"{type(e).__name__}: {e}"[:300]) for _ in c)
    return out
