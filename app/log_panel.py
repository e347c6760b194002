"""The log panel (bottom dock): messages of the ``mbs`` loggers, newest last."""
from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QPlainTextEdit

LOGGER = logging.getLogger("mbs.app")


class _Bridge(QObject):
    message = Signal(str)


class _Handler(logging.Handler):
    """Forwards log records to the panel through a queued-safe Qt signal."""

    def __init__(self, bridge):
        super().__init__(logging.INFO)
        self.bridge = bridge

    def emit(self, record):
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        try:
            self.bridge.message.emit(f"{stamp}  {record.levelname:<7} {record.getMessage()}")
        except RuntimeError:  # the panel was deleted without detach()
            logging.getLogger("mbs").removeHandler(self)


class LogPanel(QPlainTextEdit):
    """Read-only text view showing records of the ``mbs`` logger hierarchy while it exists."""

    MAX_LINES = 5000

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("log")
        self.setReadOnly(True)
        self.setMaximumBlockCount(self.MAX_LINES)
        self._bridge = _Bridge(self)
        self._bridge.message.connect(self.appendPlainText)
        self._handler = _Handler(self._bridge)
        self._logger = logging.getLogger("mbs")
        self._logger.setLevel(logging.INFO)
        self._logger.addHandler(self._handler)

    def detach(self):
        """Stop receiving records (called when the window closes)."""
        self._logger.removeHandler(self._handler)
