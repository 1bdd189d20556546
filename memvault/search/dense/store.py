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
reader never maps a slot to a half-written row; slots of re-embedded items are garbage until the space is
rebuilt (search/index/vectors.py maps only live slots to keys).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memvault.errors import EmbedError
from memvault.vault.files import remove_file, write_at


def matrix_path(root: Path, space: str) -> Path:
    return Path(root) / ".memvault" / f"vectors-{space}.f32"


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


def write_rows(root: Path, space: str, slot: int, vecs: Sequence[Sequence[float]]) -> None:
    """Write unit-length `vecs` at rows slot, slot+1, … of the space's matrix file (fsynced)."""
    arr = unit(vecs)
    write_at(matrix_path(root, space), slot * arr.shape[1] * 4, arr.tobytes())


def row_count(root: Path, space: str, dim: int) -> int:
    """How many whole rows the space's matrix file holds (0 when it is missing)."""
    try:
        return os.path.getsize(matrix_path(root, space)) // (dim * 4) if dim else 0
    except FileNotFoundError:
        return 0


def drop(root: Path, space: str) -> None:
    remove_file(matrix_path(root, space))


def _map(root: Path, space: str, dim: int) -> Any:
    np = _numpy()
    path = matrix_path(root, space)
    try:
        rows = os.path.getsize(path) // (dim * 4)
    except FileNotFoundError:
        return None
    if rows == 0:
        return None
    return np.memmap(path, dtype=np.float32, mode="r", shape=(rows, dim))


def nearest(root: Path, space: str, dim: int, query: Sequence[float], k: int) -> tuple[list[int], Any]:
    """(the `k` best slots by cosine, best first; every slot's cosine as an array), or ([], None)."""
    np = _numpy()
    m = _map(root, space, dim)
    if m is None:
        return [], None
    q = unit(query)[0]
    if q.shape[0] != dim:
        raise EmbedError(f"the question's vector has {q.shape[0]} dimensions, the stored ones {dim}")
    scores = np.asarray(m @ q)
    k = min(k, scores.shape[0])
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [int(i) for i in top], scores
