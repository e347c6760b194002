"""The installed Qt binding must not leak references to ``True`` on signal emission.

PySide6 6.12.0 on Python 3.11 drops one reference to ``True`` per signal delivered to a Python
slot; after a few thousand signals the interpreter aborts with ``bool_dealloc``.  pyproject
excludes that release; this test catches a regression of the same kind.
"""
import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    fired = Signal(str)


def test_signal_emission_keeps_refcounts():
    emitter = _Emitter()
    received = []
    emitter.fired.connect(received.append)
    before = sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(None)
    for _ in range(200):
        emitter.fired.emit("x")
    after = sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(None)
    assert len(received) == 200
    assert [a - b for a, b in zip(after, before)] == [0, 0, 0]
