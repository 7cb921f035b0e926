"""A faster exact Mamba-2 (SSD) chunked scan for CPU, installed per model instance.

Hugging Face's PyTorch fallback (``mamba2_chunk_scan``) pads every sequence to a multiple of ``chunk_size``
(32 in the tiny profile: a 37-token batch runs as 64), repeats B and C per head, and builds the intra-chunk
decay with a cumulative sum over an L x L matrix. ``ssd_scan`` computes the same function:

- chunks of equal length ``ceil(S / ceil(S / chunk_size))`` (at most ``chunk_size``; the SSD decomposition is
  exact for any chunk length), so padding is at most a few columns;
- B and C stay per group (heads broadcast), the intra-chunk decay is ``exp(cumsum_i - cumsum_j)`` masked below
  the diagonal, and the few inter-chunk steps run as a short loop.

``use_fast_mamba(model)`` switches the Mamba mixers of *that model* to it (an instance-level class swap:
other models in the process, and saved checkpoints, are untouched). Equality with the reference, values and
gradients, is tested in tests/test_fast_mamba.py.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from transformers.models.nemotron_h import modeling_nemotron_h as nh


def ssd_scan(x, dt, A, B, C, chunk_size: int, D=None, dt_bias=None, initial_states=None,
             dt_limit=(0.0, float("inf")), return_final_states: bool = False):
    """x [b, s, h, p], dt [b, s, h] (pre-softplus), A [h], B/C [b, s, g, n] -> y [b, s, h, p] (+ final state
    [b, h, p, n]); the arguments of ``mamba2_chunk_scan`` with ``dt_softplus=True``."""
    b, s, h, p = x.shape
    g, n = B.shape[2], B.shape[3]
    r = h // g
    if dt_bias is not None:
        dt = dt + dt_bias.to(dt.dtype)
    dt = torch.clamp(F.softplus(dt), min=dt_limit[0], max=dt_limit[1]).float()
    x = x.float()
    nc = max(1, math.ceil(s / chunk_size))
    L = math.ceil(s / nc)
    pad = nc * L - s
    xdt = x * dt[..., None]
    Adt = A.float() * dt                                           # [b, s, h]
    if pad:
        xdt, Adt = F.pad(xdt, (0, 0, 0, 0, 0, pad)), F.pad(Adt, (0, 0, 0, pad))
        B, C = F.pad(B, (0, 0, 0, 0, 0, pad)), F.pad(C, (0, 0, 0, 0, 0, pad))
    # layouts: heads split as (g, r); chunk c, positions l/s inside it
    X = xdt.view(b, nc, L, g, r, p).permute(0, 1, 3, 4, 2, 5)      # [b, c, g, r, L, p]
    Bc = B.float().view(b, nc, L, g, n).transpose(2, 3)            # [b, c, g, L, n]
    Cc = C.float().view(b, nc, L, g, n).transpose(2, 3)            # [b, c, g, L, n]
    Acs = Adt.view(b, nc, L, g, r).permute(0, 1, 3, 4, 2).cumsum(-1)  # [b, c, g, r, L]
    # 1. intra-chunk (diagonal blocks): y_l = sum_{s<=l} C_l.B_s exp(Acs_l - Acs_s) x_s
    causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()
    decay = torch.exp((Acs[..., :, None] - Acs[..., None, :]).masked_fill(~causal, float("-inf")))
    CB = Cc @ Bc.transpose(-1, -2)                                 # [b, c, g, L, L]
    y = (CB[:, :, :, None] * decay) @ X                            # [b, c, g, r, L, p]
    # 2. each chunk's own end state: sum_l exp(Acs_last - Acs_l) x_l B_l^T  -> [b, c, g, r, p, n]
    to_end = torch.exp(Acs[..., -1:] - Acs)
    chunk_states = (X * to_end[..., None]).transpose(-1, -2) @ Bc[:, :, :, None]
    # 3. inter-chunk recurrence (nc is small): state entering chunk c
    state = (initial_states.float().reshape(b, g, r, p, n).clone() if initial_states is not None
             else x.new_zeros(b, g, r, p, n))
    chunk_decay = torch.exp(Acs[..., -1])                          # [b, c, g, r]
    entering = []
    for c in range(nc):
        entering.append(state)
        state = state * chunk_decay[:, c, ..., None, None] + chunk_states[:, c]
    # 4. contribution of the entering state: C_l . state * exp(Acs_l)
    if nc > 1 or initial_states is not None:
        S_in = torch.stack(entering, 1)                            # [b, c, g, r, p, n]
        y = y + (Cc[:, :, :, None] @ S_in.transpose(-1, -2)) * torch.exp(Acs)[..., None]
    y = y.permute(0, 1, 4, 2, 3, 5).reshape(b, nc * L, h, p)[:, :s]
    if D is not None:
        y = y + D[..., None] * x
    if return_final_states:
        return y, state.reshape(b, h, p, n)
    return y


class FastMamba2Mixer(nh.NemotronHMamba2Mixer):
    """``NemotronHMamba2Mixer`` whose prefill / training path uses :func:`ssd_scan` and whose one-token decode
    step updates the SSM state in place with per-head decays (HF's step, without expanding dt, A, B, C to the full
    state shape)."""

    def forward(self, hidden_states, cache=None, attention_mask=None, **kwargs):
        batch_size, seq_len, _ = hidden_states.shape
        if cache is not None and seq_len == 1 and not cache.is_recording_past(self.layer_idx) \
                and cache.get_recurrent_state(self.layer_idx, state_idx=0) is not None and not torch.is_grad_enabled():
            return self._decode_step(hidden_states, cache)
        dtype = hidden_states.dtype
        recurrent_state = cache.get_recurrent_state(self.layer_idx, state_idx=0) if cache is not None else None
        hidden_states = nh.apply_mask_to_padding_states(hidden_states, attention_mask)
        projected = self.in_proj(hidden_states)
        gate, xBC, dt = projected.split([self.intermediate_size, self.conv_dim, self.num_heads], dim=-1)
        xBC = xBC.transpose(1, 2)
        if cache is not None:
            xBC = cache.update_conv_state(xBC, self.layer_idx, conv_kernel_size=self.conv_kernel_size)
        xBC = nh.causal_conv1d_fn(xBC, self.conv1d.weight.squeeze(1), self.conv1d.bias, activation=self.activation)
        if cache is not None:
            xBC = xBC[:, :, -seq_len:]
        xBC = nh.apply_mask_to_padding_states(xBC.transpose(1, 2), attention_mask)
        x, B, C = torch.split(xBC, [self.intermediate_size, self.n_groups * self.ssm_state_size,
                                    self.n_groups * self.ssm_state_size], dim=-1)
        A = -torch.exp(self.A_log.float())
        res = ssd_scan(x.view(batch_size, seq_len, self.num_heads, self.head_dim), dt, A,
                       B.view(batch_size, seq_len, self.n_groups, self.ssm_state_size),
                       C.view(batch_size, seq_len, self.n_groups, self.ssm_state_size), self.chunk_size,
                       D=self.D, dt_bias=self.dt_bias, initial_states=recurrent_state, dt_limit=self.time_step_limit,
                       return_final_states=cache is not None)
        if cache is not None:
            y, final = res
            cache.update_recurrent_state(final, layer_idx=self.layer_idx)
        else:
            y = res
        y = self.norm(y.reshape(batch_size, seq_len, -1), gate)
        return self.out_proj(y.to(dtype))


    def _decode_step(self, hidden_states, cache):
        """One token per row from the cached conv and SSM states (the math of HF's recurrent path)."""
        return mamba_decode_step(self, hidden_states.squeeze(1), cache.get_conv_state(self.layer_idx, state_idx=0),
                                 cache.get_recurrent_state(self.layer_idx, state_idx=0))[:, None]


def mamba_decode_step(mixer, x_AH, conv_state, ssm_state):
    """One token per row [A, H] -> [A, H], updating ``conv_state`` [A, conv_dim, K] and ``ssm_state`` [A, h, p, n]
    in place: the depthwise conv as a dot product over the window, per-head decays (HF's recurrent step without
    expanding dt, A, B, C to the full state shape)."""
    b = x_AH.shape[0]
    h, p, g, n = mixer.num_heads, mixer.head_dim, mixer.n_groups, mixer.ssm_state_size
    projected = mixer.in_proj(x_AH)
    gate, xBC, dt = projected.split([mixer.intermediate_size, mixer.conv_dim, mixer.num_heads], dim=-1)
    window = torch.cat([conv_state[:, :, 1:], xBC[:, :, None]], -1)
    conv_state.copy_(window)
    xBC = (window * mixer.conv1d.weight.squeeze(1)).sum(-1)  # the depthwise conv at one position
    if mixer.conv1d.bias is not None:
        xBC = xBC + mixer.conv1d.bias
    x, B, C = torch.split(mixer.act(xBC), [mixer.intermediate_size, g * n, g * n], dim=-1)
    dt = F.softplus(dt + mixer.dt_bias)                                         # [b, h]
    dA = torch.exp(dt * -torch.exp(mixer.A_log.float()))                        # [b, h]
    sv = ssm_state.view(b, g, h // g, p, n)
    xdt = (x.view(b, h, p) * dt[..., None]).view(b, g, h // g, p, 1)
    sv.mul_(dA.view(b, g, h // g, 1, 1)).add_(xdt * B.view(b, g, 1, 1, n))
    y = (sv @ C.view(b, g, 1, n, 1)).view(b, h, p) + x.view(b, h, p) * mixer.D[:, None]
    y = mixer.norm(y.view(b, -1), gate)
    return mixer.out_proj(y.to(x_AH.dtype))


def use_fast_mamba(model) -> None:
    """Switch this model's NemotronH Mamba mixers to :class:`FastMamba2Mixer` (instance-level; same weights)."""
    for module in model.modules():
        if type(module) is nh.NemotronHMamba2Mixer:
            module.__class__ = FastMamba2Mixer
