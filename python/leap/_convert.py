# SPDX-License-Identifier: Apache-2.0
"""Arguments as the C++ core takes them: numpy arrays that share the caller's memory.

numpy arrays pass as they are. torch CPU tensors are viewed as numpy arrays (``tensor.numpy()``
shares the tensor's storage), so neither is copied; the core then checks dimensions, dtypes and
contiguity and says what to pass instead. Lists and tuples become new arrays. Group ids that are
not integers (uid strings in an object array, as verl keeps them) are numbered densely, once.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence, Union


class _Numpy:
    """numpy, imported on first use: `import leap` (and leap.__version__, leap.sandbox) works in an
    interpreter without numpy; the first array function then raises numpy's ImportError."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module("numpy")
        globals()["np"] = module
        return getattr(module, name)


if TYPE_CHECKING:  # the type checker sees numpy itself; at run time the stand-in above imports it
    import numpy as np
    import numpy.typing as npt
    from typing_extensions import TypeGuard
else:
    np = _Numpy()


class Tensor(Protocol):
    """What leap uses of a torch.Tensor (leap never imports torch: tensors are the caller's)."""

    @property
    def device(self) -> Any: ...
    @property
    def dtype(self) -> Any: ...
    def detach(self) -> Tensor: ...
    def numpy(self) -> npt.NDArray[Any]: ...


# What the array functions take: a numpy array, a torch CPU tensor, or a list or tuple of numbers
# (or of hashable ids, for group ids). Dtypes, dimensions and devices are checked at run time.
ArrayLike = Union["npt.NDArray[Any]", Tensor, Sequence[Any]]


def _torch() -> Optional[ModuleType]:
    """The torch module when the caller has imported it (leap never imports torch itself)."""
    return sys.modules.get("torch")


def is_tensor(value: object) -> TypeGuard[Tensor]:
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def as_array(value: Optional[ArrayLike], name: str) -> Optional[npt.NDArray[Any]]:
    """A numpy view of a numpy array or torch CPU tensor; a new array for a list or tuple."""
    if value is None or isinstance(value, np.ndarray):
        return value
    if is_tensor(value):
        if value.device.type != "cpu":
            raise ValueError(f"{name} is on {value.device}; leap computes on the CPU: pass {name}.cpu()")
        try:
            return value.detach().numpy()
        except TypeError as error:  # bfloat16 and other dtypes numpy has no view of
            raise ValueError(f"{name} has dtype {value.dtype}, which leap does not take; "
                             f"pass {name}.double() or {name}.float()") from error
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    raise TypeError(f"{name} must be a numpy array or a torch CPU tensor, not {type(value).__name__}")


def as_output(value: Optional[ArrayLike]) -> Optional[npt.NDArray[Any]]:
    """A writeable view of the caller's out (numpy array or torch CPU tensor), or None."""
    if value is None or isinstance(value, np.ndarray):
        return value
    if is_tensor(value):
        return as_array(value, "out")
    raise TypeError(f"out must be a numpy array or a torch CPU tensor, not {type(value).__name__}")


def dense_group_ids(group_ids: ArrayLike) -> npt.NDArray[Any]:
    """Group ids as a uint32 array: integer arrays pass through (the core narrows or renumbers them),
    anything else (uid strings in an object array, tuples, ...) is numbered in order of first
    appearance. Equal ids get equal numbers; call once and reuse the result for several estimators."""
    array = as_array(group_ids, "group_ids")
    if array is None:
        raise TypeError("group_ids must be a numpy array, a torch CPU tensor, a list or a tuple, not None")
    if array.dtype.kind in "iu":
        return array
    if array.ndim != 1:
        raise ValueError(f"group_ids must be one-dimensional (one id per sample), got shape {array.shape}")
    if array.dtype.kind in "US":  # fixed-width strings: numpy numbers them without Python objects
        dense: npt.NDArray[np.intp] = np.unique(array, return_inverse=True)[1]
        return dense.astype(np.uint32)
    if array.dtype.kind == "f":
        raise ValueError("group_ids has dtype float; pass integers, or hashable uids in an object array")
    numbers: dict[Any, int] = {}
    try:
        return np.fromiter((numbers.setdefault(uid, len(numbers)) for uid in array), dtype=np.uint32,
                           count=len(array))
    except TypeError as error:
        raise ValueError(f"group_ids must hold integers or hashable values: {error}") from None


# What the array functions return: the caller's out, a numpy array, or a torch tensor when the inputs
# were tensors. Which one depends on the arguments' run-time types (tensors are the caller's torch,
# unknown to leap's annotations), so the annotation leaves it to the caller.
ArrayResult = Any


def result(out_given: Optional[ArrayLike], out_array: npt.NDArray[Any], inputs: Sequence[object]) -> ArrayResult:
    """What a function returns: the caller's own out, else the new array, as a tensor when the inputs
    were tensors (sharing the array's memory)."""
    if out_given is not None:
        return out_given
    torch = _torch()
    if torch is not None and any(is_tensor(value) for value in inputs):
        return torch.from_numpy(out_array)
    return out_array
