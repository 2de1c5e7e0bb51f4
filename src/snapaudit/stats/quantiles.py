"""Percentiles of a 1-D sample, bit-identical to ``numpy.percentile`` (default "linear").

``numpy.percentile`` imports ``numpy.ma`` on its first call (it takes ``numpy.unique`` of the
order-statistic indices, and ``numpy.unique`` asks ``numpy.ma.is_masked``): ~0.03 s of a short
``snapaudit analyze``. This is the same arithmetic without it, for a 1-D sample and a few
levels in percent:

- the virtual index ``v = (n - 1) * (level / 100)`` (float64), ``j = floor(v)``, ``g = v - j``;
- ``v >= n - 1`` takes the largest value (numpy's index -1, and so ``g = v + 1``);
- the order statistics ``x(j)``, ``x(j + 1)`` by ``numpy.partition`` with numpy's own kth;
- numpy's lerp: ``a + (b - a) * g``, or ``b - (b - a) * (1 - g)`` where ``g >= 0.5``;
- a sample holding a NaN gives its last value after partitioning (a NaN) at every level.

tests/stats/test_quantiles.py compares it with ``numpy.percentile`` bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def percentiles(sample: np.ndarray, levels: Sequence[float]) -> list[float]:
    """``numpy.percentile(sample, levels)`` (method "linear") as Python floats, for a
    non-empty 1-D float sample and levels in [0, 100]."""
    x = np.asarray(sample, dtype=np.float64)
    if x.ndim != 1 or x.shape[0] == 0:
        raise ValueError("percentiles need a non-empty 1-D sample")
    n = int(x.shape[0])
    spots = []
    for level in levels:
        if not 0.0 <= level <= 100.0:
            raise ValueError("Percentiles must be in the range [0, 100]")
        v = (n - 1) * (float(level) / 100.0)
        j = -1 if v >= n - 1 else math.floor(v)  # numpy's previous index
        spots.append((j, -1 if j == -1 else j + 1, v - j))
    # numpy's own kth list (unique of [0, -1, previous..., next...]): equal values that
    # differ in sign (-0.0, 0.0) land where numpy's partition puts them
    kth = sorted({0, -1} | {k for lo, hi, _ in spots for k in (lo, hi)})
    part = np.partition(x, kth)
    last = float(part[n - 1])
    if math.isnan(last):  # NaN sorts last
        return [last] * len(spots)
    out = []
    for lo, hi, g in spots:
        a, b = float(part[lo]), float(part[hi])
        diff = b - a
        out.append(b - diff * (1 - g) if g >= 0.5 else a + diff * g)
    return out
