"""Row bookkeeping of the lean decode states: finished rows leave in place, moving as few rows as possible."""
import torch

from recipe.model.decode.row_state import DecodeRows, compacting_order


def _state(A=7, H=2, W=12, d=3, pos=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    keys = {i: torch.randn(A, H, W, d, generator=g) for i in range(2)}
    values = {i: torch.randn(A, H, W, d, generator=g) for i in range(2)}
    conv = {0: torch.randn(A, 5, 3, generator=g)}
    ssm = {0: torch.randn(A, 4, 2, generator=g)}
    mask = torch.rand(A, W, generator=g) > 0.3
    row_pos = torch.randint(0, 50, (A,), generator=g)
    return DecodeRows(None, conv, ssm, keys, values, mask, pos, row_pos)


def _reference(state, rows):
    return ({i: t.index_select(0, rows) for i, t in state.keys.items()},
            {i: t.index_select(0, rows) for i, t in state.values.items()},
            {i: t.index_select(0, rows) for i, t in state.conv.items()},
            {i: t.index_select(0, rows) for i, t in state.ssm.items()},
            state.key_mask_AL.index_select(0, rows), state.row_pos_A.index_select(0, rows))


def _assert_selected(state, ref):
    keys, values, conv, ssm, mask, row_pos = ref
    for i in keys:   # columns at and after pos are written by the step before any step reads them
        torch.testing.assert_close(state.keys[i][:, :, : state.pos], keys[i][:, :, : state.pos], rtol=0, atol=0)
        torch.testing.assert_close(state.values[i][:, :, : state.pos], values[i][:, :, : state.pos], rtol=0, atol=0)
    for i in conv:
        torch.testing.assert_close(state.conv[i], conv[i], rtol=0, atol=0)
        torch.testing.assert_close(state.ssm[i], ssm[i], rtol=0, atol=0)
    assert torch.equal(state.key_mask_AL, mask)
    assert torch.equal(state.row_pos_A, row_pos)


def test_compacting_order_keeps_every_live_row_and_moves_only_into_finished_slots():
    g = torch.Generator().manual_seed(1)
    for _ in range(200):
        A = int(torch.randint(1, 20, (1,), generator=g))
        done = torch.rand(A, generator=g) < 0.4
        keep = compacting_order(done)
        live = (~done).nonzero().flatten()
        assert sorted(keep.tolist()) == live.tolist()
        n = len(live)
        moved = (keep != torch.arange(n)).nonzero().flatten()
        assert set(moved.tolist()) == set(done[:n].nonzero().flatten().tolist())   # only the finished slots


def test_select_in_place_equals_index_select_and_keeps_the_buffers():
    for rows in (compacting_order(torch.tensor([False, True, False, False, True, True, False])),
                 torch.tensor([4, 0, 2]),           # any order of fewer rows
                 torch.tensor([6, 5, 4, 3, 2, 1, 0])):   # a permutation
        state = _state()
        ref = _reference(state, rows)
        ptr = state.keys[0].data_ptr()
        state.select(rows)
        _assert_selected(state, ref)
        assert state.keys[0].data_ptr() == ptr     # no new K/V buffer


def test_select_repeating_rows_copies():
    state = _state(A=3)
    rows = torch.tensor([0, 0, 1, 1, 2, 2, 2])
    ref = _reference(state, rows)
    state.select(rows)
    _assert_selected(state, ref)
    assert state.keys[0].shape[0] == 7


def _prompt_state(A, P, new, seed):
    """A bucket's state after its prompt: P prompt columns (the last of them real keys), ``new`` columns after."""
    g = torch.Generator().manual_seed(seed)
    keys = {0: torch.zeros(A, 2, P + new, 3)}
    values = {0: torch.zeros(A, 2, P + new, 3)}
    keys[0][:, :, :P] = torch.randn(A, 2, P, 3, generator=g)
    values[0][:, :, :P] = torch.randn(A, 2, P, 3, generator=g)
    mask = torch.zeros(A, P + new, dtype=torch.bool)
    mask[:, :P] = torch.rand(A, P, generator=g) > 0.2
    return DecodeRows(None, {0: torch.randn(A, 4, generator=g)}, {}, keys, values, mask, P)


def test_concat_of_prompt_only_states_with_new_columns_equals_concat_of_full_width_states():
    """A prefill's buckets hold their prompts only and the join adds the columns for the new tokens: the joined
    state equals the join of buckets built at full width (left-padded keys, each row's own position)."""
    new = 5
    shapes = [(3, 7), (2, 4), (4, 9)]    # (rows, prompt width) of three buckets
    full = DecodeRows.concat([_prompt_state(A, P, new, s) for s, (A, P) in enumerate(shapes)])
    lean = DecodeRows.concat([_prompt_state(A, P, 0, s) for s, (A, P) in enumerate(shapes)], new_columns=new)
    assert lean.pos == full.pos == 9 and lean.keys[0].shape == full.keys[0].shape == (9, 2, 9 + new, 3)
    for a, b in ((lean.keys[0], full.keys[0]), (lean.values[0], full.values[0]), (lean.conv[0], full.conv[0]),
                 (lean.key_mask_AL, full.key_mask_AL), (lean.row_pos_A, full.row_pos_A)):
        assert torch.equal(a, b)
    assert torch.equal(lean.row_pos_A, torch.tensor([7] * 3 + [4] * 2 + [9] * 4))
    assert not lean.key_mask_AL[3:5, :5].any()       # the 4-column bucket's keys sit in columns 5-8
    assert torch.equal(lean.keys[0][3:5, :, 5:9], _prompt_state(2, 4, 0, 1).keys[0])
