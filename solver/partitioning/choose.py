"""Which partition a configuration gets: dense (:class:`~solver.partitioning.partition.Partition`)
or sparse (:class:`~solver.partitioning.sparse.SparsePartition`, when the system's Φ_q has a known
pattern and enough rows for sparse factorizations to pay; :mod:`solver.partitioning.sparse` and
scipy.sparse are imported only then)."""
from __future__ import annotations

from .block import BlockPartition, block_rows
from .partition import Partition, independent_rows

SPARSE_MIN_ROWS = 120           # independent constraint rows from which the sparse algebra is used


def sparse_pattern(system, rows):
    """The system's Φ_q pattern (rows, cols) when the sparse algebra should be used for a partition
    with ``rows`` independent constraint rows; else None."""
    pattern = getattr(system, "jacobian_pattern", None)
    if pattern is None or rows < SPARSE_MIN_ROWS:
        return None
    return pattern()


def build_partition(method, system, q, t) -> Partition:
    """The coordinate partition of ``method`` ("lu", "qr", "svd") at (q, t)."""
    jac = system.constraints(q, t).jac
    first = block_rows(system, method, jac)
    if first is not None:                   # an open tree's normalization rows: block-sparse U, V in O(n)
        return BlockPartition(q, jac, first)
    rows, redundant = independent_rows(jac)
    pattern = sparse_pattern(system, len(rows))
    if pattern is not None:
        from .sparse import SparsePartition
        return SparsePartition(method, q, jac, rows, redundant, pattern)
    return Partition(method, q, jac, rows, redundant)
