"""A lean one-token decode step for Llama-architecture models (SmolLM2, the small profile's model), for our
generation loop (``recipe.train.rollout.generate``).

Hugging Face's cached forward grows its key/value cache by concatenation every step (each step copies the whole
cache), builds a 4D attention mask and a cache object per call, and runs ~10 module calls a layer.
``LlamaDecodeState`` runs the same math on plain tensors (the row bookkeeping is
:class:`recipe.model.decode.row_state.DecodeRows`'):

- keys and values go into a preallocated buffer of ``prompt + max_new_tokens`` columns, beside a key mask; on CUDA
  the buffer holds the autocast dtype (bf16), the precision Hugging Face's SDPA casts the cache to anyway;
- RoPE uses the model's own ``rotary_emb`` at each row's own position (``row_pos_A``): prompts prefilled in length
  buckets (``recipe.train.rollout.prefill_in_buckets``) are joined with left-padded keys, and RoPE scores depend on
  relative positions only, so rows keep exactly the distances a plain padded forward gives them;
- GQA by viewing the query heads as ``[kv_heads, group]`` (Hugging Face's ``repeat_kv`` order), no copy of K/V;
- on the CPU, attention runs through whichever of ``scaled_dot_product_attention`` and the plain matmul path is
  faster on this machine (``cpu_attention_path``: measured once a process). The fastest differs by CPU: with AMX,
  bf16 SDPA was 89 ms a step against matmul's 141 (64 rows x 512 tokens); on an AVX512-BF16 CPU without AMX, bf16
  SDPA's kernel took 21 ms a layer at 64 rows x 600 keys against matmul's 7, and a decode step 237 ms against 132
  (64 rows x 256 tokens; benchmarks/bench_decode.py prints the path it used).

Equality with Hugging Face's cached forward (logits per step, greedy tokens, bucketed prefill) is tested in
tests/test_llama_path.py.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import time
from pathlib import Path

import torch

from recipe.model.decode.row_state import DecodeRows


def is_lean_llama(model) -> bool:
    cfg = getattr(model, "config", None)
    return getattr(cfg, "model_type", None) == "llama" and hasattr(getattr(model, "model", None), "rotary_emb")


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaDecodeState(DecodeRows):
    """Llama's per-row decode state: K/V buffers of every layer; ``step`` feeds one token per row."""

    @classmethod
    @torch.no_grad()
    def from_hf_cache(cls, model, cache, attention_mask_AP: torch.Tensor, max_new_tokens: int) -> "LlamaDecodeState":
        dev = attention_mask_AP.device
        dtype = torch.get_autocast_dtype(dev.type) if torch.is_autocast_enabled(dev.type) else None
        if dev.type == "cpu" and dtype is not None:   # the faster cache dtype on this CPU (cpu_kv_dtype)
            dtype = model_cpu_kv_dtype(model)
        keys = {i: cls.kv_buffer(layer.keys, max_new_tokens, dtype) for i, layer in enumerate(cache.layers)}
        values = {i: cls.kv_buffer(layer.values, max_new_tokens, dtype) for i, layer in enumerate(cache.layers)}
        return cls(model, {}, {}, keys, values, cls.key_mask(attention_mask_AP, max_new_tokens),
                   attention_mask_AP.shape[1])

    @torch.no_grad()
    def step(self, tok_A: torch.Tensor) -> torch.Tensor:
        """Logits [A, V] (float32) of the next token after ``tok_A``."""
        m = self.model.model
        t = self._open_column()
        h = m.embed_tokens(tok_A)
        cos, sin = m.rotary_emb(h, self.row_pos_A[:, None])                      # [A, 1, d]
        mask = self.key_mask_AL[:, None, None, : t + 1]
        for i, layer in enumerate(m.layers):
            h = h + _attention_step(layer.self_attn, layer.input_layernorm(h), cos, sin, self.keys[i],
                                    self.values[i], mask, t)
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        self._advance()
        return self.model.lm_head(m.norm(h)).float()


def _attention_step(attn, x_AH, cos_A1d, sin_A1d, K, V, mask_A11T, t: int):
    q_AKRd, k_AKd, v_AKd = rotated_qkv(attn, x_AH, cos_A1d, sin_A1d, K.shape[1], K.shape[3])
    K[:, :, t] = k_AKd
    V[:, :, t] = v_AKd
    if K.device.type == "cpu":
        cpu_attend = attend_sdpa if cpu_attention_path(q_AKRd, K) == "sdpa" else attend_bmm
        if K.dtype == torch.float32 and torch.is_autocast_enabled("cpu"):
            # an fp32 cache under bf16 autocast: attend in fp32 (autocast would cast the whole cache slice to bf16
            # every layer-step), then the output projection under autocast as the other linears
            with torch.autocast("cpu", enabled=False):
                out = cpu_attend(_BareAttention(attn.scaling), q_AKRd.float(), K[:, :, : t + 1], V[:, :, : t + 1],
                                 mask_A11T)
            return attn.o_proj(out)
        return cpu_attend(attn, q_AKRd, K[:, :, : t + 1], V[:, :, : t + 1], mask_A11T)
    return attend(attn, q_AKRd, K[:, :, : t + 1], V[:, :, : t + 1], mask_A11T)


def attend_bmm(attn, q_AKRd, K, V, mask_A11T):
    """``attend`` as two ``bmm`` over views of the buffer's column slice (rows x K/V heads folded into one batch
    dimension: no copy), the CPU's matmul path. ``attend``'s 4D matmul under CPU autocast allocated a new temporary
    for every layer-step, each a little larger than the last: over a full IFEval decode (128 rows, up to 1,500 keys)
    the heap grew until the kernel killed the process at 24 GB; these two views keep it at the cache's size."""
    A, kvh, rep, d = q_AKRd.shape
    T = K.shape[2]
    q = q_AKRd.to(K.dtype).reshape(A * kvh, rep, d)
    scores = torch.bmm(q, K.reshape(A * kvh, T, d).transpose(1, 2)).view(A, kvh, rep, T) * attn.scaling
    scores = scores.masked_fill(~mask_A11T, float("-inf"))
    probs = torch.softmax(scores, -1, dtype=torch.float32).to(V.dtype)
    out = torch.bmm(probs.view(A * kvh, rep, T), V.reshape(A * kvh, T, d))
    return attn.o_proj(out.reshape(A, kvh * rep * d))


CPU_ATTENTION_PATHS = ("sdpa", "matmul")
_cpu_attention_choice: dict[tuple, str] = {}   # the path chosen per (K/V dtype, autocast, heads): benchmarks print it


def cpu_attention_path(q_AKRd: torch.Tensor, K: torch.Tensor) -> str:
    """"sdpa" or "matmul": the faster CPU decode attention for these heads and this K/V dtype under the current
    autocast state, timed once a process on a 64-row x 512-key slice of a wider cache (a few ms);
    ``RECIPE_CPU_ATTENTION=sdpa|matmul`` fixes it (benchmarks, tests). Both compute the same attention
    (tests/test_llama_path.py)."""
    forced = _forced_cpu_attention()
    if forced:
        return forced
    _, kvh, rep, d = q_AKRd.shape
    key = (K.dtype, torch.is_autocast_enabled("cpu"), kvh, rep, d)
    choice = _cpu_attention_choice.get(key)          # looked up every layer-step: timed only on the first
    if choice is None:
        times = _cpu_attention_times(kvh, rep, d, K.dtype)
        choice = _cpu_attention_choice[key] = min(times, key=times.get)
    return choice


def _forced_cpu_attention() -> str:
    """``RECIPE_CPU_ATTENTION`` (a path of ``CPU_ATTENTION_PATHS``), or "" when unset."""
    forced = os.environ.get("RECIPE_CPU_ATTENTION", "")
    if forced and forced not in CPU_ATTENTION_PATHS:
        raise ValueError(f"RECIPE_CPU_ATTENTION={forced!r}: one of {', '.join(CPU_ATTENTION_PATHS)}")
    return forced


_cpu_attention_timed: dict[tuple, dict[str, float]] = {}


def model_cpu_kv_dtype(model) -> torch.dtype:
    """``cpu_kv_dtype`` for this Llama model's heads, timed under bf16 autocast (the state its decode runs in)."""
    attn = model.model.layers[0].self_attn
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return cpu_kv_dtype(attn.config.num_key_value_heads, attn.num_key_value_groups, attn.head_dim)


def cpu_kv_dtype(kvh: int, rep: int, d: int) -> torch.dtype:
    """The K/V cache dtype of a CPU decode under bf16 autocast: bf16 or fp32, whichever attends faster on this
    machine (each with its faster path, timed as
    ``cpu_attention_path``, once per machine: ``kv_dtype_store``); ``RECIPE_CPU_KV_DTYPE=
    bfloat16|float32`` fixes it. bf16 halves the cache's memory and, with AMX, attends fastest; on an AVX512-BF16 CPU
    without AMX, a bf16 ``bmm`` over 1,000 of a 1,500-column cache's keys (128 rows) took 50 ms a layer against 12 ms
    in fp32 (the strided slice is what bf16 handles badly there: 10 ms over a contiguous block). The two give slightly
    different logits: the in-process evaluation backend puts the choice in its sample cache's key
    (``recipe.eval.backends.hf``)."""
    forced = os.environ.get("RECIPE_CPU_KV_DTYPE", "")
    if forced:
        if forced not in _KV_DTYPES:
            raise ValueError(f"RECIPE_CPU_KV_DTYPE={forced!r}: bfloat16 or float32")
        return _KV_DTYPES[forced]
    store = kv_dtype_store()
    key = f"{_cpu_signature()} torch {torch.__version__} heads {kvh}x{rep}x{d}"
    if (store, key) not in _kv_dtype_chosen:   # called for every decode batch: the store is read once a process
        stored = _stored_kv_dtypes(store).get(key)
        if stored in _KV_DTYPES:
            _kv_dtype_chosen[store, key] = _KV_DTYPES[stored]
        else:
            best = {dt: min(_cpu_attention_times(kvh, rep, d, dt).values()) for dt in (torch.bfloat16, torch.float32)}
            _kv_dtype_chosen[store, key] = _store_kv_dtype(store, key, min(best, key=best.get))
    return _kv_dtype_chosen[store, key]


_kv_dtype_chosen: dict[tuple[Path, str], torch.dtype] = {}
_KV_DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}   # the names RECIPE_CPU_KV_DTYPE and the store use


def kv_dtype_store() -> Path:
    """Where the timed K/V dtype is kept per machine: ``$RECIPE_MACHINE_CACHE`` (default
    ``$XDG_CACHE_HOME/nemotron-cascade2-recipe``, as NLTK's data) ``/cpu_kv_dtype.json``. Timed once a process, the
    choice flipped between two processes when bf16 and fp32 ran close or the machine was loaded, and the evaluation's
    sample cache keys on it: a re-run of IFEval then generated again instead of reusing its answers. Kept per
    machine, every later process decodes with the first choice; delete the file to time again."""
    env = os.environ.get("RECIPE_MACHINE_CACHE")
    base = Path(env).expanduser() if env else \
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nemotron-cascade2-recipe"
    return base / "cpu_kv_dtype.json"


@functools.cache
def _cpu_signature() -> str:
    """The CPU's model name and flags (what decides which dtype attends faster), hashed."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    first: dict[str, str] = {}
    for line in lines:
        k, _, v = line.partition(":")
        first.setdefault(k.strip(), v.strip())
    text = f"{first.get('model name', platform.processor())}|{first.get('flags', '')}|{platform.machine()}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _stored_kv_dtypes(store: Path) -> dict:
    try:
        data = json.loads(store.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store_kv_dtype(store: Path, key: str, dtype: torch.dtype) -> torch.dtype:
    """Add ``key -> dtype`` and return the dtype to use: another process's choice stored first wins; a store that
    cannot be written leaves the choice to this process."""
    from recipe.runs.layout import write_json_atomic
    data = _stored_kv_dtypes(store)
    if data.get(key) in _KV_DTYPES:
        return _KV_DTYPES[data[key]]
    try:
        write_json_atomic(store, {**data, key: str(dtype).removeprefix("torch.")})
    except OSError:
        pass
    return dtype


def _cpu_attention_times(kvh: int, rep: int, d: int, dtype: torch.dtype) -> dict[str, float]:
    """{path: seconds} for an attention over a ``dtype`` cache, under the current autocast state (an fp32 cache
    attends with autocast off, as the decode step does); ``RECIPE_CPU_ATTENTION`` leaves only the path it names."""
    forced = _forced_cpu_attention()
    key = (dtype, torch.is_autocast_enabled("cpu"), kvh, rep, d)
    if key not in _cpu_attention_timed:
        _cpu_attention_timed[key] = _time_cpu_attention(kvh, rep, d, dtype)
    times = _cpu_attention_timed[key]
    return {forced: times[forced]} if forced else times


@torch.no_grad()
def _time_cpu_attention(kvh: int, rep: int, d: int, dtype: torch.dtype, rows: int = 64, keys: int = 512
                        ) -> dict[str, float]:
    g = torch.Generator().manual_seed(0)
    q = torch.randn(rows, kvh, rep, d, generator=g).to(dtype)
    # the first ``keys`` columns of a buffer twice as wide: the decode step attends over such a slice of its
    # preallocated cache, and a bf16 bmm over a strided slice ran 3-5x slower than over a contiguous block on an
    # AVX512-BF16 CPU without AMX (50 against 10 ms a layer at 128 rows x 1,000 of 1,500 columns; fp32: 12 either way)
    K, V = (torch.randn(rows, kvh, 2 * keys, d, generator=g).to(dtype)[:, :, :keys] for _ in range(2))
    mask = torch.ones(rows, 1, 1, keys, dtype=torch.bool)
    attn = _BareAttention(d ** -0.5)
    best = {}
    fp32_off = dtype == torch.float32 and torch.is_autocast_enabled("cpu")
    with torch.autocast("cpu", enabled=False) if fp32_off else contextlib.nullcontext():
        for path, f in (("sdpa", attend_sdpa), ("matmul", attend_bmm)):
            f(attn, q, K, V, mask)   # warm-up: first-call allocations
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                f(attn, q, K, V, mask)
                times.append(time.perf_counter() - t0)
            best[path] = min(times)
    return best


class _BareAttention:
    """The two attributes ``attend`` / ``attend_sdpa`` read, without an output projection (timing only)."""

    def __init__(self, scaling: float):
        self.scaling = scaling

    @staticmethod
    def o_proj(x):
        return x


def attend_sdpa(attn, q_AKRd, K, V, mask_A11T):
    """``attend`` through ``scaled_dot_product_attention`` with grouped-query heads (the same head mapping as
    ``attend``'s view), the CPU's path: its kernel reads the cached keys / values of the buffer's column slice in
    place, where ``attend``'s matmul copies the slice to a contiguous block first, every layer of every step. On the
    2-core machines at 64 rows x 512 new tokens under bf16 autocast: 89 ms a step against 141 (benchmarks/
    bench_decode.py); in fp32 the two are level."""
    A, kvh, rep, d = q_AKRd.shape
    q = q_AKRd.reshape(A, kvh * rep, 1, d).to(K.dtype)
    out = torch.nn.functional.scaled_dot_product_attention(q, K, V, attn_mask=mask_A11T, scale=attn.scaling,
                                                           enable_gqa=True)
    return attn.o_proj(out.reshape(A, kvh * rep * d))


def rotated_qkv(attn, x_AH, cos_A1d, sin_A1d, kvh: int, d: int):
    """One decode position's query [A, kvh, rep, d] and new key / value [A, kvh, d], RoPE applied to q and k
    (grouped-query: ``rep`` query heads share a K/V head)."""
    A, rep = x_AH.shape[0], attn.num_key_value_groups
    q = attn.q_proj(x_AH).view(A, kvh * rep, d)
    k = attn.k_proj(x_AH).view(A, kvh, d)
    q = (q * cos_A1d + _rotate_half(q) * sin_A1d).view(A, kvh, rep, d)
    return q, k * cos_A1d + _rotate_half(k) * sin_A1d, attn.v_proj(x_AH).view(A, kvh, d)


def attend(attn, q_AKRd, K, V, mask_A11T):
    """Attention of the queries over the cached keys / values ``K``, ``V`` [A, kvh, T, d] where the mask allows,
    then the output projection."""
    A, kvh, rep, d = q_AKRd.shape
    scores = (q_AKRd.to(K.dtype) @ K.transpose(-1, -2)) * attn.scaling             # [A, kvh, rep, T]
    scores = scores.masked_fill(~mask_A11T, float("-inf"))
    out = torch.softmax(scores, -1, dtype=torch.float32).to(V.dtype) @ V           # [A, kvh, rep, d]
    return attn.o_proj(out.reshape(A, kvh * rep * d))
