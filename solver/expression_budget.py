"""The whole-file budget of expression cost: one project file may not hold more expression work
than :data:`MAX_MODEL_EXPRESSION_NODES` in total, however the work is split between expressions.

Each expression is bounded by itself (:mod:`solver.expressions`: 2000 characters, 20000 nodes for
it and each of its first two derivatives), but a file of many expressions near those limits took
seconds each to check and every right-hand-side evaluation of a run pays for all of them.  While a
budget is active (``with ExpressionBudget():``, as :func:`solver.model.model.model_from_dict` does),
:func:`solver.expressions.time_function` charges each expression its written-out size (the nodes
of the expression and its two derivatives: what one evaluation at a time point costs) and refuses
the expression that exceeds the budget, and every later one before parsing it.
"""
from __future__ import annotations

import contextvars

from .errors import ExpressionError

MAX_MODEL_EXPRESSION_NODES = 200_000
_ACTIVE = contextvars.ContextVar("expression_budget", default=None)


class ExpressionBudget:
    """A context in which the expressions parsed share ``limit`` written-out nodes."""

    def __init__(self, limit=MAX_MODEL_EXPRESSION_NODES):
        self.limit = limit
        self.used = 0
        self._token = None

    def __enter__(self):
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE.reset(self._token)
        return False

    def message(self):
        return (f"the model's expressions together are too complex: more than {self.limit} nodes with "
                f"their first two derivatives written out (the limit per file; simplify them or use "
                f"tables {{'t': [...], 'values': [...]}})")


def check_budget():
    """Raise :class:`ExpressionError` when the active budget is already spent (before parsing)."""
    budget = _ACTIVE.get()
    if budget is not None and budget.used > budget.limit:
        raise ExpressionError(budget.message())


def charge(cost):
    """Charge ``cost`` nodes to the active budget (none: nothing); raise when it is exceeded."""
    budget = _ACTIVE.get()
    if budget is not None:
        budget.used += cost
        if budget.used > budget.limit:
            raise ExpressionError(budget.message())
