"""The rules both step loops of a dynamic run follow — the Python loop of
:class:`solver.analysis.dynamics.Run` and the compiled one of :mod:`solver.analysis.segments`:
when to re-partition, when a partition is stuck, when the step size has collapsed."""
from __future__ import annotations

from ..errors import SolverError

REPARTITION_RATIO = 0.2      # re-partition when the partition quality drops below this fraction …
AMPLIFICATION_GROWTH = 1 / REPARTITION_RATIO   # … or ‖∂q/∂z‖ grows by this factor (Partition.degraded)
STUCK_RESTARTS = 25          # restarts without 20 clean steps in between: the partition cannot go on
CLEAN_STRETCH = 20
STALL_STEPS = 300            # this many steps advancing less than STALL_FRACTION·t_end: stalled
STALL_FRACTION = 1e-6
STAGE_RETRIES = 4            # the compiled loop: a stage's position Newton that fails retries the step this many
                             # times shorter (BRANCH_SHRINK) before re-partitioning — a restart keeps the step size
                             # DOP853 chose, and 25 of them at one state end the run (fuzz seed 1047); the Python
                             # loop's scipy integrators restart from a small first step anyway


def stall_error(run, t, span):
    """The SolverError of a collapsed step size: STALL_STEPS steps advanced only ``span`` up to t."""
    return SolverError(f"the step size collapsed ({STALL_STEPS} steps advanced only {span:.3g} s); the mechanism "
                       "is probably at a singular configuration or the model is too stiff for this integrator — "
                       "try partitioning='qr', 'hybrid' or integrator='bdf'", time=t, kind="step_collapse",
                       elements=run._worst_owners(run.q_last, t))
