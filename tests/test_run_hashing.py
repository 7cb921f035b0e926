"""recipe.runs.content_hashes remembers the digests of large files it has read, by their stat identity, and reads a file
again whenever it was rewritten (in place or replaced) or changed too recently for its timestamps to tell."""
from __future__ import annotations

import hashlib
import os

import pytest

from recipe.runs import content_hashes as hashing

MB2 = 2 << 20


def _write(path, byte: bytes) -> str:
    data = byte * MB2
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _no_reads(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the file was read again")
    monkeypatch.setattr(hashing, "open", refuse, raising=False)


@pytest.fixture
def later(monkeypatch):
    """The clock SETTLED_S + 10 s ahead: files written in the test count as settled."""
    now = hashing.time_ns()
    monkeypatch.setattr(hashing, "time_ns", lambda: now + int((hashing.SETTLED_S + 10) * 1e9))
    hashing._MEMO.clear()
    yield
    hashing._MEMO.clear()


def test_a_settled_file_is_read_once(tmp_path, monkeypatch, later):
    f = tmp_path / "model.safetensors"
    want = _write(f, b"a")
    assert hashing.sha256_file(f) == want
    with monkeypatch.context() as m:
        _no_reads(m)
        assert hashing.sha256_file(f) == want
        assert hashing.sha256_dir(tmp_path)  # the folder's hash uses the remembered digest too


def test_a_file_rewritten_in_place_or_replaced_is_read_again(tmp_path, later):
    f = tmp_path / "model.safetensors"
    _write(f, b"a")
    first = hashing.sha256_file(f)
    st = os.stat(f)
    want = _write(f, b"b")  # same size, same inode
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # a new mtime even within one clock tick
    assert hashing.sha256_file(f) == want != first
    tmp = tmp_path / "new"
    want = _write(tmp, b"c")
    os.replace(tmp, f)  # a new inode
    assert hashing.sha256_file(f) == want


def test_a_recently_changed_file_is_not_remembered(tmp_path, monkeypatch):
    hashing._MEMO.clear()
    f = tmp_path / "model.safetensors"
    want = _write(f, b"a")
    assert hashing.sha256_file(f) == want
    with monkeypatch.context() as m:
        _no_reads(m)
        with pytest.raises(AssertionError, match="read again"):
            hashing.sha256_file(f)


def test_small_files_are_not_remembered(tmp_path, monkeypatch, later):
    f = tmp_path / "config.json"
    f.write_text("{}")
    hashing.sha256_file(f)
    assert not hashing._MEMO
