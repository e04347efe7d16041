"""One guarded reader for array inputs (``.npz``, ``.npy``, SciPy sparse ``.npz``) a stage takes from another.

A truncated, empty, pickled or wrong-shape file must end in one :class:`DataError` naming the file and what is
wrong, never a ``BadZipFile`` or ``ValueError`` traceback from deep inside a stage. Nothing is unpickled:
``np.load`` always runs with ``allow_pickle=False``. Arrays are read eagerly, so a corrupt member fails here,
at the read, not later when a stage touches it. (JSON and JSONL inputs go through :mod:`components.io`.)
"""

from __future__ import annotations

import os
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from components.errors import DataError
from components.io import check_input_file

if TYPE_CHECKING:
    import numpy as np

# what a corrupt or hostile array file raises inside numpy/zipfile
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, KeyError, TypeError, RuntimeError)


def _why(exc: BaseException) -> str:
    if isinstance(exc, EOFError) or "No data left" in str(exc):
        return "empty or truncated"
    if isinstance(exc, (zipfile.BadZipFile, zlib.error)):
        return "not a valid .npz archive (truncated or corrupt)"
    text = str(exc)
    if "Cannot load file containing pickled data" in text or "file contains pickled" in text:
        return "not a numpy .npy/.npz file (unrecognised content; pickled data is refused)"
    if "allow_pickle" in text or "pickled" in text or "Python objects" in text:
        return "holds pickled objects (refused: only plain numeric arrays are read)"
    if isinstance(exc, OSError):
        return f"cannot read ({exc.strerror or type(exc).__name__})"
    return f"not a readable numpy file ({type(exc).__name__}: {text[:80]})"


class CorruptInput(DataError, ValueError):
    """An array file that cannot be read; a ValueError too, so a caller that wraps those adds its context."""


class Arrays(dict):
    """The arrays of one ``.npz`` file; a missing name is a DataError naming the file (usable in ``with``)."""

    def __init__(self, path: Path, arrays: dict) -> None:
        super().__init__(arrays)
        self.path = path

    def __missing__(self, key):
        have = ", ".join(sorted(self)) or "none"
        raise DataError(f"{self.path}: no array {key!r} (it has: {have[:120]})")

    def __enter__(self) -> Arrays:
        return self

    def __exit__(self, *exc) -> None:
        return None

    @property
    def files(self) -> list[str]:
        return list(self)


def load_npz(
    path: str | os.PathLike, *, keys: Iterable[str] = (), finite: bool = False, expect: dict | None = None
) -> Arrays:
    """Every array of an ``.npz`` file, read now; ``keys`` must be present, ``finite``: no NaN or infinity;
    ``expect`` maps array names to :func:`check_array` keywords (``ndim``, ``rows``, ``cols``, ``finite``)."""
    import numpy as np

    path = check_input_file(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise CorruptInput(f"{path}: a single .npy array, expected an .npz archive")
            arrays = Arrays(path, {name: z[name] for name in z.files})
    except DataError:
        raise
    except _READ_ERRORS as exc:
        raise CorruptInput(f"{path}: {_why(exc)}") from None
    for key in keys:
        arrays[key]
    for key, want in (expect or {}).items():
        check_array(arrays[key], path, key, **want)
    for name, arr in arrays.items():
        if finite and arr.dtype.kind in "fc":
            check_array(arr, path, name, finite=True)
    return arrays


def load_npy(path: str | os.PathLike, *, mmap_mode: str | None = None, finite: bool = False) -> np.ndarray:
    """One ``.npy`` array (memory-mapped when asked); a corrupt, empty or pickled file is a DataError naming it."""
    import numpy as np

    path = check_input_file(path)
    try:
        arr = np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except _READ_ERRORS as exc:
        raise CorruptInput(f"{path}: {_why(exc)}") from None
    if not isinstance(arr, np.ndarray):
        raise DataError(f"{path}: an .npz archive, expected a single .npy array")
    return check_array(arr, path, None, finite=True) if finite else arr


def load_torch_state(path: str | os.PathLike) -> dict:
    """A state dict saved with ``torch.save`` (read with ``weights_only=True``: nothing but tensors and plain
    containers is unpickled); a corrupt, truncated or non-dict file is a DataError naming it."""
    import torch

    path = check_input_file(path)
    try:
        state = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as exc:  # torch's restricted unpickler raises many types for a damaged file
        text = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise CorruptInput(f"{path}: not a readable torch state dict ({text})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise DataError(f"{path}: not a state dict of tensors ({type(state).__name__})")
    return state


def load_safetensors(path: str | os.PathLike) -> dict:
    """The tensors of a ``.safetensors`` file (nothing unpickled); a corrupt or truncated one is a DataError."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = check_input_file(path)
    try:
        return load_file(str(path))
    except (*_READ_ERRORS, SafetensorError) as exc:
        text = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise CorruptInput(f"{path}: not a readable .safetensors file ({text})") from None


def load_state_into(module, state: dict, path: str | os.PathLike, config: str | os.PathLike | None = None) -> None:
    """``module.load_state_dict(state)``; missing, unexpected or wrong-shape tensors are a DataError naming
    ``path`` (the file the state came from) and ``config`` (the file the model was built from) instead of
    torch's multi-line RuntimeError."""
    try:
        module.load_state_dict(state)
    except RuntimeError as exc:
        first = next((ln.strip() for ln in str(exc).splitlines()[1:] if ln.strip()), str(exc))
        if config is not None and Path(config).parent == Path(path).parent:  # one folder: name it once
            raise DataError(f"{config}: the model it describes does not fit {Path(path).name} ({first[:70]})") from None
        built = f"the model {config} describes" if config is not None else "the model"
        raise DataError(f"{path}: does not fit {built} ({first[:70]})") from None


def load_sparse(path: str | os.PathLike):
    """A SciPy sparse matrix saved with ``scipy.sparse.save_npz``; a corrupt file is a DataError naming it."""
    import scipy.sparse as sp

    path = check_input_file(path)
    try:
        return sp.load_npz(path)
    except _READ_ERRORS as exc:
        raise CorruptInput(f"{path}: {_why(exc)}") from None


def check_array(
    arr: np.ndarray,
    path: str | os.PathLike,
    name: str | None = None,
    *,
    ndim: int | None = None,
    cols: int | None = None,
    rows: int | None = None,
    finite: bool = False,
) -> np.ndarray:
    """``arr`` if it is numeric with the expected number of dimensions, rows and columns (and finite, if asked)."""
    import numpy as np

    what = f"{path}" + (f": array {name!r}" if name else "")
    if arr.dtype.hasobject or arr.dtype.kind not in "biufc":
        raise DataError(f"{what}: dtype {arr.dtype}, expected numbers")
    if ndim is not None and arr.ndim != ndim:
        raise DataError(f"{what}: {arr.ndim}-D (shape {arr.shape}), expected {ndim}-D")
    if rows is not None and (arr.ndim < 1 or arr.shape[0] != rows):
        raise DataError(f"{what}: shape {arr.shape}, expected {rows} rows")
    if cols is not None and (arr.ndim != 2 or arr.shape[1] != cols):
        raise DataError(f"{what}: shape {arr.shape}, expected {cols} columns")
    if finite and arr.dtype.kind in "fc" and not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise DataError(f"{what}: {bad} NaN or infinite value(s)")
    return arr
