"""Every failure kind a run can end with gets its own advice in the GUI (app.simulation.suggestion)."""
from __future__ import annotations

import solver
from app.simulation import RunOutcome, suggestion


def test_every_failure_kind_of_a_run_has_advice():
    generic = suggestion(RunOutcome("failed", message="x", kind="no such kind"))
    run_kinds = set(solver.FAILURE_KINDS) - {"assembly", "locked", "equilibrium", "build", "mass"}
    for kind in run_kinds:
        assert suggestion(RunOutcome("failed", message="x", kind=kind)) != generic, kind
    assert "too slowly" in suggestion(RunOutcome("failed", message="the run is crawling", kind="crawl"))
