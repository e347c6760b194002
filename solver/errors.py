"""Error types of the solver package.

Every problem a user can cause is reported with one of these; nothing else escapes the public API
for bad input.  ``ModelError`` collects *all* problems found (each naming the element and the
field) before it is raised, so a user fixes a file in one pass.
"""
from __future__ import annotations


class MBSError(Exception):
    """Base class of every error this package raises on purpose."""


class ModelError(MBSError, ValueError):
    """Invalid model or project input.

    ``problems`` is the list of messages, each of the form ``"<field path>: <what is wrong>"``
    (e.g. ``"joints[3].axis: must be a non-zero 3-vector"``).
    """

    def __init__(self, problems):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("; ".join(self.problems) if len(self.problems) < 4 else
                         "; ".join(self.problems[:3]) + f"; ... ({len(self.problems)} problems)")


class ExpressionError(ModelError):
    """A function expression (of time) could not be parsed or is not allowed."""


#: What a failed run ran into (SolverError.kind); a program reads this, never the message text.
FAILURE_KINDS = {
    "assembly": "the constraints cannot all be satisfied at the start",
    "locked": "positions cannot follow (Newton on the constraints fails: locked or singular mechanism)",
    "singular": "the partition cannot get past a singular configuration",
    "step_collapse": "the integrator's step size collapsed",
    "integration": "the integrator failed (error test)",
    "diverged": "non-finite forces or accelerations",
    "mass": "the mass matrix is singular",
    "equilibrium": "no static equilibrium found",
    "build": "generated code could not be compiled (FMU export)",
}


class SolverError(MBSError):
    """A run failed.  ``kind`` says what it ran into (a key of FAILURE_KINDS), ``time`` is the
    simulated time of the failure, ``elements`` names the joints or bodies involved (may be
    empty), and ``results`` holds what was computed up to the failure (a
    :class:`solver.results.Results`, or ``None`` when nothing was)."""

    def __init__(self, message, time=None, elements=(), results=None, kind="integration"):
        if kind not in FAILURE_KINDS:
            raise ValueError(f"SolverError kind must be one of {', '.join(FAILURE_KINDS)}; got {kind!r}")
        self.kind = kind
        self.time = time
        self.elements = tuple(elements)
        self.results = results
        where = f" at t = {time:.6g} s" if time is not None else ""
        who = f" (involving {', '.join(self.elements)})" if self.elements else ""
        super().__init__(f"{message}{where}{who}")
        self.message = message


class Cancelled(MBSError):
    """A run was cancelled by its caller; ``results`` holds the partial results."""

    def __init__(self, time=None, results=None):
        self.time = time
        self.results = results
        super().__init__(f"run cancelled at t = {time:.6g} s" if time is not None else "run cancelled")
