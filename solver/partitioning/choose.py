"""Which partition a configuration gets: dense (:class:`~solver.partitioning.partition.Partition`)
or sparse (:class:`~solver.partitioning.sparse.SparsePartition`, when the system's Φ_q has a known
pattern and enough rows for sparse factorizations to pay)."""
from __future__ import annotations

from .partition import Partition, independent_rows
from .sparse import SparsePartition, sparse_pattern


def build_partition(method, system, q, t) -> Partition:
    """The coordinate partition of ``method`` ("lu", "qr", "svd") at (q, t)."""
    jac = system.constraints(q, t).jac
    rows, redundant = independent_rows(jac)
    pattern = sparse_pattern(system, len(rows))
    if pattern is not None:
        return SparsePartition(method, q, jac, rows, redundant, pattern)
    return Partition(method, q, jac, rows, redundant)
