"""Validation lanes: the domains of one validation, spread over worker processes of one torch thread each.

Why: validation decodes a few dozen short answers per domain, so its time is per-step overhead (many small
kernels), not arithmetic. A second torch thread buys little there (1.3x on a GRPO step, docs/SPEED.md); two
processes of one thread each run two domains at once. The sandboxed domains (code, swe, swe_agentic) mostly wait
on their sandbox runs, and the other lane decodes meanwhile.

Exactness: ``validate_samples`` seeds torch's generator per (seed, split, domain) before each domain, so a domain's
rows do not depend on which process scores it or on the domains before it. A lane returns the generator state
after its domain; the caller is left with the state after the last domain, as in process. With one torch thread
in process the rows are bit-identical (``tests/test_validation_lanes.py``); with two, float rounding differs as
between any two two-thread runs.

The workers (``evaluation.lanes`` of them, ``python -m recipe.validation.lanes``) start on first use and stay for the
life of the process: one ``recipe run`` kernel pays their start-up (importing torch and transformers) once. A worker
builds the model from its config once per architecture and loads the weights sent with every domain (~1 MB for the
tiny model). A worker that fails reports its traceback; one that dies is named with its exit code; either way the
lanes restart at the next validation.
"""
from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import time
import traceback
from multiprocessing.connection import Connection, wait

import torch

_MODELS: dict[str, torch.nn.Module] = {}   # worker side: one skeleton per architecture (its config as JSON)


class _Lane:
    """One worker process (``python -m recipe.validation.lanes``) and the two pipes to it (pickled messages between
    this process and its own child; nothing from outside is unpickled). A module of its own, not
    ``multiprocessing``'s spawn: that re-runs the caller's ``__main__`` script in every worker."""

    def __init__(self, fork: bool = False):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        if fork:
            self.proc = _ForkedWorker(to_r, from_w)
        else:
            env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
            self.proc = subprocess.Popen([sys.executable, "-m", "recipe.validation.lanes", str(to_r), str(from_w)],
                                         pass_fds=(to_r, from_w), env=env, stdin=subprocess.DEVNULL,
                                         start_new_session=True)  # a Ctrl-C or kernel interrupt reaches this only
        os.close(to_r)
        os.close(from_w)
        self.tx, self.rx = Connection(to_w, readable=False), Connection(from_r, writable=False)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def hang_up(self, kill: bool = False) -> None:
        """Close the pipes (an idle worker sees EOF and exits); ``kill``: do not let it finish its domain."""
        for c in (self.tx, self.rx):
            c.close()
        if kill:  # it may be in the middle of a domain: do not wait for it
            self.proc.kill()

    def wait(self) -> None:
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class _ForkedWorker:
    """A lane worker forked from this process (the ``subprocess.Popen`` methods the lanes use): it starts with
    everything this process has imported, so it costs no start-up. Only for a process that has run no torch
    parallel region yet (a forked OpenMP runtime is unsafe); later workers are spawned."""

    def __init__(self, rx_fd: int, tx_fd: int):
        self.returncode: int | None = None
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.setsid()                               # as start_new_session: the parent's Ctrl-C is not ours
                keep = sorted({rx_fd, tx_fd})             # close every other inherited descriptor: another lane's
                os.closerange(3, keep[0])                 # pipe end kept here would hide its EOF, and the
                os.closerange(keep[0] + 1, keep[1])       # parent's sockets (a Jupyter kernel's) are not ours
                os.closerange(keep[1] + 1, os.sysconf("SC_OPEN_MAX"))
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.close(devnull)
                sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__   # not a Jupyter kernel's output streams
                os.environ.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
                _serve(rx_fd, tx_fd)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"lane worker {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)


_LANES: list[_Lane] = []


def _lanes(n: int, fork: bool = False) -> list[_Lane]:
    global _LANES
    if len(_LANES) != n or not all(lane.alive() for lane in _LANES):
        shutdown_lanes()
        _LANES = [_Lane(fork=fork) for _ in range(n)]
    return _LANES


def prestart_lanes(n: int, fork: bool = False) -> None:
    """Start ``n`` lane workers now, without waiting: they import torch, transformers and the verifiers while this
    process does other (single-threaded) work, e.g. a run's data phase. Nothing happens for ``n`` <= 1.

    ``fork``: fork them from this process instead, after importing what they need here (``recipe run``'s kernel,
    before the data notebook, which imports the same modules): no second and third import of torch and
    transformers competing with this process's for the two cores. Only before this process runs torch work."""
    if n > 1:
        if fork:
            _import_worker_modules()
        _lanes(n, fork=fork)


def _import_worker_modules() -> None:
    import recipe.validation.in_process  # noqa: F401  (what every task needs, imported before the first one arrives)
    import recipe.train.agentic_rollouts  # noqa: F401
    from transformers import AutoModelForCausalLM  # noqa: F401


def shutdown_lanes(kill: bool = False, wait: bool = True) -> None:
    """Stop the lane workers (they also stop when this process exits: their pipe closes). ``wait=False``: hang up
    and return; each worker sees EOF and exits on its own (at exit: a worker's interpreter teardown with torch
    loaded takes ~1 s, which a process that is ending need not wait for)."""
    global _LANES
    for lane in _LANES:   # all hang up first, so the workers shut down side by side
        lane.hang_up(kill)
    if wait:
        for lane in _LANES:
            lane.wait()
    _LANES = []


atexit.register(shutdown_lanes, wait=False)


def _weights_blob(model) -> tuple[object, bytes]:
    from safetensors.torch import save
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    return model.config, save(state)


def _model_from(config, blob: bytes):
    """Worker side: the model of ``config`` with the weights in ``blob`` (skeleton cached per config)."""
    from safetensors.torch import load
    from transformers import AutoModelForCausalLM

    from recipe.model.build import quiet_hf
    from recipe.model.fast_mamba import use_fast_mamba

    key = config.to_json_string(use_diff=False)
    model = _MODELS.get(key)
    if model is None:
        quiet_hf()
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        use_fast_mamba(model)
        _MODELS[key] = model
    model.load_state_dict(load(blob), strict=True)
    return model.eval()


def _lane_task(config, blob: bytes, tokenizer, splits_d: dict, domain: str, ecfg, split: str,
               thinking: bool, seed: int) -> tuple[list[dict], bytes]:
    from recipe.validation.in_process import validate_in_process

    model = _model_from(config, blob)  # in eval mode
    rows = validate_in_process(model, tokenizer, {domain: splits_d}, [domain], ecfg.model_copy(update={"lanes": 1}),
                               split=split, thinking=thinking, seed=seed)
    return rows, torch.get_rng_state().numpy().tobytes()


def _cost(splits: dict, domain: str, split: str, ecfg) -> float:
    """A rough, order-only estimate of a domain's validation time: prompts x (prompt words + cap)."""
    recs = splits[domain][split]
    words = sum(len(str(r.get("prompt") or r.get("messages") or "")) for r in recs) / 5.0
    sandboxed = 40.0 if domain in ("code", "swe", "swe_agentic") else 0.0   # a sandbox run per answer
    return words + len(recs) * (ecfg.cap_for(domain) + sandboxed)


def validate_in_lanes(model, tokenizer, splits: dict, domains: list[str], ecfg, *, split: str, thinking: bool,
                      seed: int) -> list[dict]:
    """``validate_samples``'s rows (same order), each domain scored in a lane; the costliest domains go first and
    a lane takes the next domain as soon as it is free."""
    for d in domains:
        if split not in splits[d]:
            raise KeyError(f"domain {d}: no {split!r} split (splits: {sorted(splits[d])})")
    config, blob = _weights_blob(model)
    todo = sorted(domains, key=lambda d: -_cost(splits, d, split, ecfg))
    lanes = _lanes(ecfg.lanes)  # the run's workers; a validation of fewer domains leaves some idle
    busy: dict[int, str] = {}
    results: dict[str, tuple[list[dict], bytes]] = {}
    try:
        while todo or busy:
            for i, lane in enumerate(lanes):
                if i not in busy and todo:
                    d = todo.pop(0)
                    lane.tx.send((config, blob, tokenizer, {split: splits[d][split]}, d, ecfg, split, thinking, seed))
                    busy[i] = d
            ready = wait([lanes[i].rx for i in busy])
            for i in [i for i in busy if lanes[i].rx in ready]:
                try:
                    status, payload = lanes[i].rx.recv()
                except EOFError:
                    raise RuntimeError(f"validation lane worker {lanes[i].proc.pid} exited (code "
                                       f"{lanes[i].proc.wait()}) while scoring {busy[i]}") from None
                if status != "ok":
                    raise RuntimeError(f"validation of {busy[i]} failed in a lane worker:\n{payload}")
                results[busy.pop(i)] = payload
    except BaseException:
        shutdown_lanes(kill=True)  # a half-done exchange leaves replies in the pipes: start clean next time
        raise
    rows: list[dict] = []
    for d in domains:
        rows += results[d][0]
    state = torch.frombuffer(bytearray(results[domains[-1]][1]), dtype=torch.uint8)
    torch.set_rng_state(state)
    return rows


def _serve(rx_fd: int, tx_fd: int) -> None:
    """Worker loop: one domain per message until the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent is interrupted; this worker ends with its pipe
    torch.set_num_threads(1)
    rx, tx = Connection(rx_fd, writable=False), Connection(tx_fd, readable=False)
    while True:
        try:
            task = rx.recv()
        except EOFError:
            return
        try:
            reply = ("ok", _lane_task(*task))
        except Exception:
            reply = ("error", traceback.format_exc())
        try:
            tx.send(reply)
        except (BrokenPipeError, OSError):  # the parent went away
            return


if __name__ == "__main__":
    _import_worker_modules()
    _serve(int(sys.argv[1]), int(sys.argv[2]))
