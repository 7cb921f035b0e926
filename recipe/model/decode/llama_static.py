"""Llama's decode step on static buffers, replayed as a captured CUDA graph on CUDA (the eager step on the CPU).

At 256 rows SmolLM2-135M's decode step reads ~270 MB of bf16 weights and a few MB of K/V: ~0.1 ms of an H200's
memory bandwidth. The eager step (:class:`recipe.model.decode.llama.LlamaDecodeState`) launches ~15 kernels a layer
from Python, and the launches, not the GPU, set its pace. A CUDA graph replays all of a step's kernels in one launch,
which needs every tensor the step touches at a fixed address and shape:

- one K/V buffer per layer of ``capacity`` rows x a **length bucket** (the next power of two >= prompt + new tokens,
  at least 128) columns; a step writes its column at the position held in a one-element tensor and attends over the
  whole bucket under a key mask (masked columns add exactly nothing to the softmax);
- **batch buckets** (8, 16, 32, ... rows): the step runs on the first ``Ab`` rows of the buffers (a slice on dim 0 of
  a contiguous buffer stays contiguous); rows that finished leave at the host's checks (``select`` compacts the
  rest to the front), and the batch bucket shrinks with them; unused rows attend to one dummy column;
- token, positions and logits live in static tensors; the step advances the positions itself.

One graph per batch bucket, captured at its first use and kept with the buffers in a cache per model and length
bucket, so a stage captures once and every later call (and every optimizer step: the weights are updated in place)
replays it. Graphs are captured directly (``torch.cuda.CUDAGraph``) rather than by
``torch.compile(mode="reduce-overhead")``: the step is already written on static buffers, so compiling adds
minutes of Inductor work per shape and a dependency on a compiler toolchain on the GPU machine for no further saving
at this size, and a direct capture keeps the CPU path the very same Python code the tests check.
"""
from __future__ import annotations

import warnings
import weakref

import torch

from recipe.model.decode.llama import attend, rotated_qkv

BATCH_BUCKETS = (8, 16, 32, 64, 128, 256, 512, 1024)
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # model -> {length bucket: StaticLlamaDecode}


def batch_bucket(n: int) -> int:
    return next((b for b in BATCH_BUCKETS if b >= n), -(-n // BATCH_BUCKETS[-1]) * BATCH_BUCKETS[-1])


def length_bucket(n: int) -> int:
    return max(128, 1 << (n - 1).bit_length())


class StaticLlamaDecode:
    """Static decode buffers of one model at one length bucket; ``load`` takes over an eager
    :class:`LlamaDecodeState` after the prefill, then ``step`` and ``select`` as the eager state's."""

    def __init__(self, model, capacity: int, length: int, dtype: torch.dtype, device: torch.device):
        cfg = model.config
        kvh = cfg.num_key_value_heads
        d = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        n_layers = len(model.model.layers)
        self.model, self.capacity, self.length = model, capacity, length
        self.use_graph = device.type == "cuda"
        self.K = [torch.zeros(capacity, kvh, length, d, dtype=dtype, device=device) for _ in range(n_layers)]
        self.V = [torch.zeros_like(k) for k in self.K]
        self.mask = torch.zeros(capacity, length, dtype=torch.bool, device=device)
        self.tok = torch.zeros(capacity, dtype=torch.long, device=device)
        self.row_pos = torch.zeros(capacity, dtype=torch.long, device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)
        self.graphs: dict[int, tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self.n = self.Ab = self.host_pos = 0

    @classmethod
    def for_state(cls, state) -> "StaticLlamaDecode":
        """The cached buffers for this state's model and length bucket (new or grown ones when needed), loaded."""
        A, W = state.key_mask_AL.shape
        K0 = state.keys[0]
        per_model = _CACHE.setdefault(state.model, {})
        L = length_bucket(W)
        buf = per_model.get(L)
        if buf is None or buf.capacity < A or buf.K[0].dtype != K0.dtype:
            buf = per_model[L] = cls(state.model, batch_bucket(A), L, K0.dtype, K0.device)
        buf.load(state)
        return buf

    def load(self, state) -> None:
        A, W = state.key_mask_AL.shape
        for i in range(len(self.K)):
            self.K[i][:A, :, :W] = state.keys[i]
            self.V[i][:A, :, :W] = state.values[i]
        self.mask.zero_()
        self.mask[:A, :W] = state.key_mask_AL
        self.row_pos[:A] = state.row_pos_A
        self.pos.fill_(state.pos)
        self.host_pos = state.pos       # the same position, known to the host without a sync
        self.n, self.Ab = A, batch_bucket(A)
        self._pad_rows()

    def _pad_rows(self) -> None:
        """Rows n..Ab are no one's: zero positions, one dummy key (a finite softmax)."""
        self.mask[self.n:self.Ab] = False
        self.mask[self.n:self.Ab, 0] = True
        self.row_pos[self.n:self.Ab] = 0

    def select(self, rows: torch.Tensor) -> None:
        """Keep these rows (a subset, in this order) at the front; the batch bucket shrinks to fit them."""
        n = len(rows)
        for bufs in (self.K, self.V):
            for b in bufs:
                b[:n] = b[:self.Ab].index_select(0, rows)
        self.mask[:n] = self.mask[:self.Ab].index_select(0, rows)
        self.row_pos[:n] = self.row_pos[:self.Ab].index_select(0, rows)
        self.n, self.Ab = n, batch_bucket(n)
        self._pad_rows()

    @torch.no_grad()
    def step(self, tok_A: torch.Tensor) -> torch.Tensor:
        """Logits [n, V] (float32) of the next token after ``tok_A`` ([n])."""
        if self.host_pos >= self.length:
            raise RuntimeError("StaticLlamaDecode: more steps than its length bucket holds")
        self.host_pos += 1
        self.tok[:self.n] = tok_A
        if not self.use_graph:
            return self._step(self.Ab)[:self.n]
        captured = self.graphs.get(self.Ab) or self._capture(self.Ab)
        if captured is None:                       # capture failed (warned): the same step, launched eagerly
            return self._step(self.Ab)[:self.n]
        graph, out = captured
        graph.replay()
        return out[:self.n]

    def _step(self, Ab: int) -> torch.Tensor:
        m = self.model.model
        h = m.embed_tokens(self.tok[:Ab])
        cos, sin = m.rotary_emb(h, self.row_pos[:Ab, None])                        # [Ab, 1, d]
        mask = self.mask[:Ab]
        mask.index_fill_(1, self.pos, True)
        mask_A11L = mask[:, None, None, :]
        for i, layer in enumerate(m.layers):
            h = h + _attention_step(layer.self_attn, layer.input_layernorm(h), cos, sin, self.K[i][:Ab],
                                    self.V[i][:Ab], mask_A11L, self.pos)
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        self.pos.add_(1)
        self.row_pos[:Ab].add_(1)
        return self.model.lm_head(m.norm(h)).float()

    def _capture(self, Ab: int):
        """Capture the step at batch bucket ``Ab`` (after one warm-up run on a side stream, whose position and mask
        changes are undone; its K/V column is written again by the first replay)."""
        saved = (self.pos.clone(), self.row_pos.clone(), self.mask.clone())
        dtype = self.K[0].dtype
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream), torch.autocast("cuda", dtype=dtype, cache_enabled=False):
            self._step(Ab)
        torch.cuda.current_stream().wait_stream(stream)
        for dst, src in zip((self.pos, self.row_pos, self.mask), saved):
            dst.copy_(src)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph), torch.autocast("cuda", dtype=dtype, cache_enabled=False):
                out = self._step(Ab)
        except RuntimeError as e:   # a run should not die for want of a graph: say so, and decode without one
            warnings.warn(f"CUDA graph capture of the decode step failed ({e}); decoding without graphs")
            self.use_graph = False
            out = None
        for dst, src in zip((self.pos, self.row_pos, self.mask), saved):   # capture recorded, did not run
            dst.copy_(src)
        if out is None:
            return None
        self.graphs[Ab] = (graph, out)
        return graph, out


def _attention_step(attn, x_AH, cos_A1d, sin_A1d, K, V, mask_A11L, pos_1):
    """:func:`recipe.model.decode.llama._attention_step` over the whole length bucket, the new column written at
    the position in ``pos_1`` (a tensor, so a captured graph reads it at replay)."""
    q_AKRd, k_AKd, v_AKd = rotated_qkv(attn, x_AH, cos_A1d, sin_A1d, K.shape[1], K.shape[3])
    K.index_copy_(2, pos_1, k_AKd.to(K.dtype)[:, :, None])
    V.index_copy_(2, pos_1, v_AKd.to(V.dtype)[:, :, None])
    return attend(attn, q_AKRd, K, V, mask_A11L)
