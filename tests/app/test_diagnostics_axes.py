"""The diagnostics and plot panels read right (issue #31, item 10): an exact-zero constraint violation
(a tree in joint coordinates) is drawn at the round-off floor on a log axis with plain decades (no
"(x1e+27)" factor) and the header says max |Φ| = 0, not 1e-300; legends sit above the curves, never
over them; the log's "×N real time" is the simulated time over the wall time it prints."""
import logging
import re

import numpy as np
from test_stale import _run

from app.plots import LOG_FLOOR


def test_exact_zero_violation_legends_and_real_time(window, qtbot, pendulum, caplog):
    pendulum.settings.set("formulation", "relative")
    window.document.set_model(pendulum)
    window.document.select("pivot")
    with caplog.at_level(logging.INFO, logger="mbs.app"):
        _run(window, qtbot)
    window.diagnostics_dock.raise_()
    d = window.diagnostics
    violation = d.plots[0]
    assert np.max(d.results.constraint_violation) == 0.0
    assert "max |Φ| = 0 " in d.info.text()
    qtbot.wait(100)
    low, high = violation.vb.viewRange()[1]                        # log10 of the drawn range
    assert low > np.log10(LOG_FLOOR) - 2 and high < 0
    assert violation.getAxis("left").autoSIPrefixScale == 1.0
    for panel in (d, window.plots):
        for plot in panel.plots:
            if plot.listDataItems():
                legend, box = plot.legend.sceneBoundingRect(), plot.vb.sceneBoundingRect()
                assert legend.height() > 0 and legend.bottom() <= box.top() + 1
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("Run finished"))
    t, wall, factor = (float(x) for x in re.search(r"t = (\S+) s in (\S+) s wall \(×(\S+) real time", line).groups())
    assert t / (wall + 0.005) / 1.05 <= factor <= t / max(wall - 0.005, 1e-3) * 1.05   # wall printed to 0.01 s
