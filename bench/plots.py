"""CSV and PNG (pyqtgraph, offscreen) of time series, for the bench scripts' figures."""
from __future__ import annotations

import csv
import os

COLOURS = [(30, 80, 200), (200, 60, 40), (40, 150, 60), (150, 60, 180), (200, 140, 20)]


def write_series(out, name, title, x_label, y_label, curves, log_y=False):
    """Write ``<out>/<name>.csv`` (one x, y column pair per curve) and ``<name>.png``.

    curves: [(label, x, y)]; x_label / y_label: (text, unit).  Returns "" or, when the PNG could not be
    made (no Qt platform), the reason — the CSV is always written."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([f"{label}_{axis}" for label, *_ in curves for axis in ("x", "y")])
        longest = max(len(x) for _, x, _ in curves)
        for k in range(longest):
            w.writerow([v for _, x, y in curves for v in ((x[k], y[k]) if k < len(x) else ("", ""))])
    try:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        import pyqtgraph as pg
        import pyqtgraph.exporters
        pg.mkQApp()                                         # the exporter needs a QApplication
        pg.setConfigOptions(background="w", foreground="k", antialias=True)
        plot = pg.PlotWidget(title=title)
        plot.resize(800, 480)
        if len(curves) > 1:
            plot.addLegend()
        for k, (label, x, y) in enumerate(curves):
            plot.plot(x, y, pen=pg.mkPen(COLOURS[k % len(COLOURS)], width=2), name=label)
        plot.setLogMode(y=log_y)
        plot.setLabel("bottom", x_label[0], units=x_label[1])
        plot.setLabel("left", y_label[0], units=y_label[1])
        plot.showGrid(x=True, y=True, alpha=0.3)
        exporter = pg.exporters.ImageExporter(plot.plotItem)
        exporter.parameters()["width"] = 800
        exporter.export(os.path.join(out, name + ".png"))
        return ""
    except Exception as exc:   # noqa: BLE001 — plots are optional; the CSV file is always written
        return f"{type(exc).__name__}: {exc}"
