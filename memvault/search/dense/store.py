"""The vectors themselves: one float32 matrix file per space under `.memvault/` (vectors-card.f32,
vectors-episode.f32), row = slot, unit length, read memory-mapped and searched by brute force with numpy.

Chosen by measurement (bench/vectors.py: 100,000 unit vectors x 384 dims, top 10; four runs on 2 cores shared
with other jobs, so ranges): a float32 matrix memory-mapped and multiplied with the question takes 5-32 ms
warm and 55-187 ms in a fresh process (most of it importing numpy and paging 147 MB), exact, built in under a
second. float16 halves the file but numpy has no fast float16 product (60-380 ms warm). sqlite-vec's vec0 is
brute force too (70-106 ms warm, 160-270 ms cold, but 32 MB RSS) and this Python's sqlite3 cannot load
extensions (it would need apsw). usearch's HNSW answers in 0.6-1.4 ms warm, but a fresh process pays 113-318
ms, building takes 28-155 s, and its recall@10 was 0.46-0.49 with default settings (0.83 with expansion 256) on
that synthetic data. Brute force stays exact, incremental (rows appended in place) and simple at the sizes a
memory vault reaches; an approximate index can come later behind `nearest` if vaults outgrow it. numpy (the
`memvault[embed]` extra) is imported inside the functions: this module loads only when embeddings are on.

Rows are written in place at their slot (vault.files.write_at, fsynced) before the key list records them, so a
reader never maps a slot to a half-written row. The row of a re-embedded item stays behind unused (the key
list maps only live slots to keys) until `memvault embed` compacts: once unused rows outnumber live ones, the
live rows go to a new file (written atomically under a new name), the key list moves to it in one
transaction, and the old file is removed; a compaction killed midway leaves a stray file the next one deletes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memvault.errors import EmbedError
from memvault.vault.files import atomic_write, remove_file, write_at
from memvault.vault.local import derived_dir


def matrix_path(root: Path, name: str) -> Path:
    """The matrix file `name` (the key list's vec_file: vectors-card.f32, or a compacted generation)."""
    local = derived_dir(Path(root))
    if local is None:
        raise EmbedError("no folder to keep vectors in: the vault and the user cache are read-only")
    return local / name


def _numpy():
    try:
        import numpy as np
    except ImportError:
        raise EmbedError("embeddings need numpy: pip install 'memvault[embed]'") from None
    return np


def unit(vecs: Sequence[Sequence[float]]) -> Any:
    """The vectors as a float32 array of unit rows (a zero vector stays zero)."""
    np = _numpy()
    arr = np.asarray(vecs, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms


def write_rows(root: Path, name: str, slot: int, vecs: Sequence[Sequence[float]]) -> None:
    """Write unit-length `vecs` at rows slot, slot+1, … of the matrix file `name` (fsynced)."""
    arr = unit(vecs)
    write_at(matrix_path(root, name), slot * arr.shape[1] * 4, arr.tobytes())


def compact_rows(root: Path, old: str, new: str, dim: int, slots: Sequence[int]) -> None:
    """Write the rows `slots` of matrix `old`, in that order, as the new matrix file `new` (atomic)."""
    np = _numpy()
    m = _map(root, old, dim)
    arr = np.asarray(m[list(slots)], dtype=np.float32) if m is not None and len(slots) else np.zeros((0, dim))
    atomic_write(matrix_path(root, new), arr.astype(np.float32).tobytes())


def stray_files(root: Path, space: str, keep: set[str]) -> list[str]:
    """Matrix files of `space` the key list does not name (left by a compaction that was killed)."""
    local = derived_dir(Path(root))
    try:
        names = os.listdir(local) if local else []
    except FileNotFoundError:
        return []
    return [n for n in names if n.startswith(f"vectors-{space}") and n.endswith(".f32") and n not in keep]


def row_count(root: Path, name: str, dim: int) -> int:
    """How many whole rows the matrix file `name` holds (0 when it is missing)."""
    try:
        return os.path.getsize(matrix_path(root, name)) // (dim * 4) if dim else 0
    except FileNotFoundError:
        return 0


def damaged(root: Path, name: str, dim: int) -> bool:
    """Whether the matrix holds a row that is neither unit length nor zero (read in blocks)."""
    np = _numpy()
    m = _map(root, name, dim)
    if m is None:
        return False
    with np.errstate(all="ignore"):
        for start in range(0, m.shape[0], 16384):
            norms = np.linalg.norm(np.asarray(m[start:start + 16384], dtype=np.float64), axis=1)
            if not np.all((np.abs(norms - 1.0) < 1e-3) | (norms == 0)):
                return True
    return False


def drop(root: Path, name: str) -> None:
    remove_file(matrix_path(root, name))


def _map(root: Path, name: str, dim: int) -> Any:
    np = _numpy()
    path = matrix_path(root, name)
    try:
        rows = os.path.getsize(path) // (dim * 4)
    except FileNotFoundError:
        return None
    if rows == 0:
        return None
    return np.memmap(path, dtype=np.float32, mode="r", shape=(rows, dim))


def nearest(root: Path, name: str, dim: int, query: Sequence[float], k: int) -> tuple[list[int], Any]:
    """(the `k` best slots of matrix `name` by cosine, best first; every slot's cosine as an array), or
    ([], None)."""
    np = _numpy()
    m = _map(root, name, dim)
    if m is None:
        return [], None
    q = unit(query)[0]
    if q.shape[0] != dim:
        raise EmbedError(f"the question's vector has {q.shape[0]} dimensions, the stored ones {dim}")
    with np.errstate(all="ignore"):
        scores = np.asarray(m @ q)
    # Cosines of unit rows lie in [-1, 1]: anything else means the file holds something else (damaged by
    # hand, a disk error) and its scores mean nothing.
    if not np.all(np.abs(scores) <= 1.001):  # NaN fails this too
        raise EmbedError(f"{name} is damaged (its rows are not unit vectors): run memvault embed")
    k = min(k, scores.shape[0])
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [int(i) for i in top], scores
