"""Per-coordinate arrays kept small: a vector whose entries are all equal stored as one number.

A fit holds many vectors of length ``p`` (bounds, the design's map, noise scales, sensitivities, step
sizes); on the bounded design most of them are one number repeated (every feature on [-1, 1]). At
``p`` near the number of stored values of a sparse X they cost as much as X itself, so they are kept
as read-only broadcast views of one number (``uniform_view``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["number_or_array", "uniform_view"]


def uniform_view(v):
    """``v``, or, when its entries are all equal, a read-only view of one number broadcast to its shape.

    Parameters
    ----------
    v : ndarray of shape (p,), or anything else (returned as it is)

    Returns
    -------
    ndarray of shape (p,) and ``v``'s dtype, read-only where it is a view; or ``v`` itself.
    """
    a = np.asarray(v) if isinstance(v, np.ndarray) else None
    if a is None or a.ndim != 1 or a.size < 2 or a.strides[0] == 0 or not np.all(a == a[0]):
        return v
    return np.broadcast_to(np.array(a[0], dtype=a.dtype), a.shape)


def number_or_array(v):
    """The one number (a float) of a vector whose entries are all equal, a ``uniform_view`` or not; else ``v``: what
    a compiled loop takes for a quantity that may be the same on every coordinate (``_kernels._entry``), so that it
    reads no strided view."""
    a = uniform_view(v)
    if isinstance(a, np.ndarray) and a.ndim == 1 and a.size and a.strides[0] == 0:
        return float(a[0])
    return v
