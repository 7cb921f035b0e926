"""Validation lanes (recipe.validation.lanes): the same rows and the same random numbers as validating in process."""
import pytest
import torch

from hub_server.tiny import tiny_validation_setup


@pytest.fixture(scope="module")
def setup():
    yield tiny_validation_setup(n=4)
    from recipe.validation.lanes import shutdown_lanes
    shutdown_lanes()


def _validate(setup, lanes: int, domains=None, seed: int = 5):
    from recipe.validation.domain_validation import validate_samples

    cfg, splits, model, tok, ecfg = setup
    torch.manual_seed(1234)  # a state that a missing restore would leave behind
    rows = validate_samples(model, tok, splits, domains or cfg.domains.names, ecfg.model_copy(update={"lanes": lanes}),
                            split="val", seed=seed)
    return rows, torch.get_rng_state()


def test_lanes_give_the_rows_and_generator_state_of_one_process(setup):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread in process, as in a lane: bit-identical arithmetic
    try:
        serial, serial_state = _validate(setup, lanes=1)
        laned, laned_state = _validate(setup, lanes=2)
    finally:
        torch.set_num_threads(threads)
    cfg = setup[0]
    assert [r["domain"] for r in laned] == [r["domain"] for r in serial]
    assert {r["domain"] for r in serial} == set(cfg.domains.names)
    assert laned == serial  # responses, rewards, item ids, sample indices
    assert torch.equal(laned_state, serial_state)  # left as after the last domain, not as before the call
    # the rows really are sampled: another seed gives other responses
    other, _ = _validate(setup, lanes=2, seed=6)
    assert [r["response"] for r in other] != [r["response"] for r in laned]


def test_a_failing_domain_names_itself_and_the_lanes_recover(setup):
    cfg, splits, model, tok, ecfg = setup
    broken = dict(splits)
    broken["math"] = {"val": [dict(r, verifier={"name": "no_such_verifier"}) for r in splits["math"]["val"]]}
    from recipe.validation.domain_validation import validate_samples

    with pytest.raises(RuntimeError, match="validation of math failed in a lane worker") as e:
        validate_samples(model, tok, broken, ["mcqa", "math"], ecfg.model_copy(update={"lanes": 2}), split="val")
    assert "no_such_verifier" in str(e.value)  # the worker's traceback comes along
    rows, _ = _validate(setup, lanes=2, domains=["mcqa", "chat"])
    assert {r["domain"] for r in rows} == {"mcqa", "chat"}


def test_a_missing_split_is_refused_before_any_lane_starts(setup):
    cfg, splits, model, tok, ecfg = setup
    from recipe.validation.domain_validation import validate_samples

    with pytest.raises(KeyError, match="no 'report' split"):
        validate_samples(model, tok, splits, ["math", "mcqa"], ecfg.model_copy(update={"lanes": 2}), split="report")


def test_a_dead_worker_is_replaced_at_the_next_validation(setup):
    from recipe.validation import lanes

    _validate(setup, lanes=2, domains=["mcqa", "chat"])
    first = lanes._LANES[0].proc
    first.kill()
    first.wait()
    rows, _ = _validate(setup, lanes=2, domains=["mcqa", "chat"])
    assert {r["domain"] for r in rows} == {"mcqa", "chat"}
    assert lanes._LANES[0].proc is not first and all(lane.alive() for lane in lanes._LANES)


_FORKED = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
from recipe.validation import lanes
lanes.prestart_lanes(2, fork=True)          # as recipe run's kernel: before any torch work
procs = [lane.proc for lane in lanes._LANES]
assert all(isinstance(p, lanes._ForkedWorker) for p in procs), procs
from hub_server.tiny import tiny_validation_setup
from recipe.validation.domain_validation import validate_samples
cfg, splits, model, tok, ecfg = tiny_validation_setup(n=3)
torch.set_num_threads(1)
laned = validate_samples(model, tok, splits, cfg.domains.names, ecfg.model_copy(update={"lanes": 2}), split="val", seed=5)
assert [lane.proc for lane in lanes._LANES] == procs           # the forked workers did the work
serial = validate_samples(model, tok, splits, cfg.domains.names, ecfg.model_copy(update={"lanes": 1}), split="val", seed=5)
assert laned == serial and {r["domain"] for r in serial} == set(cfg.domains.names)
lanes.shutdown_lanes()       # each worker exits on EOF: no other process (the other lane) holds its pipe open
assert [p.returncode for p in procs] == [0, 0], [p.returncode for p in procs]
print("forked lanes ok")
"""


def test_lanes_forked_from_a_fresh_process_give_the_same_rows_and_exit_on_hang_up(tmp_path):
    """recipe run forks its lanes from the kernel after its imports; fork is only safe before torch work, so this
    runs in a fresh interpreter."""
    import subprocess
    import sys
    from pathlib import Path

    tests_dir = Path(__file__).resolve().parent
    script = tmp_path / "forked.py"
    script.write_text(_FORKED)
    out = subprocess.run([sys.executable, str(script), str(tests_dir)], capture_output=True, text=True, timeout=300,
                         cwd=tests_dir.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "forked lanes ok" in out.stdout
