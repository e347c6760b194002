"""Error types of the solver package.

Every problem a user can cause is reported with one of these; nothing else escapes the public API
for bad input.  ``ModelError`` collects *all* problems found (each naming the element and the
field) before it is raised, so a user fixes a file in one pass.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


class MBSError(Exception):
    """Base class of every error this package raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, as data: ``path`` says where it is ("joint 'pivot'" in a
    model, "model.joints[2]" in a project file, "" when unknown), ``element`` is the name of the
    element it is about (None: the model or file as a whole), ``field`` the element's field (None:
    the element as a whole), ``message`` what is wrong.  ``str()`` is the text a user reads,
    ``"<path>.<field>: <message>"``."""
    path: str
    element: str | None
    field: str | None
    message: str

    def __str__(self):
        where = f"{self.path}.{self.field}" if self.field else self.path
        return f"{where}: {self.message}" if where else self.message

    def at(self, path: str) -> "Problem":
        """The same problem located at ``path`` (an element's path in a file instead of its name)."""
        return replace(self, path=path)


def as_problem(problem) -> Problem:
    """A Problem for ``problem``; text without structure becomes a Problem of its message only."""
    return problem if isinstance(problem, Problem) else Problem("", None, None, str(problem))


class ModelError(MBSError, ValueError):
    """Invalid model or project input.

    ``problems`` is the list of messages, each of the form ``"<field path>: <what is wrong>"``
    (e.g. ``"joints[3].axis: must be a non-zero 3-vector"``); ``details`` the same problems as
    :class:`Problem` objects (element and field as data, for a program such as the GUI).  Give
    either strings or Problems.
    """

    def __init__(self, problems):
        if isinstance(problems, (str, Problem)):
            problems = [problems]
        self.details = [as_problem(p) for p in problems]
        self.problems = [str(p) for p in self.details]
        super().__init__("; ".join(self.problems) if len(self.problems) < 4 else
                         "; ".join(self.problems[:3]) + f"; ... ({len(self.problems)} problems)")

    def __reduce__(self):            # pickles (results of worker processes) keep the structure
        return type(self), (self.details,)


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
    "limit": "the run reached settings.max_steps or settings.max_wall_time",
    "crawl": "at its recent rate the run would need far more than settings.max_steps or max_wall_time",
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
