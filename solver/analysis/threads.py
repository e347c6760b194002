"""Thread settings of the solver's numerical work."""
import contextlib
import functools
import importlib
import sys
import threading

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_active = {"count": 0, "limiter": None}     # runs inside single_threaded_blas, and the limit they share


@functools.lru_cache(maxsize=2)
def _controller(scipy_loaded) -> ThreadpoolController:
    """The BLAS libraries loaded — numpy's, and scipy's once ``scipy_loaded`` (scipy.linalg imported):
    found once for each — a fresh scan of the loaded libraries costs ≈ 1.4 ms, a fixed cost of every
    run."""
    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas(scipy=True):
    """The solver's matrices are small: BLAS threads only add synchronisation (a 12×12 LU solve
    took 4.5 ms with 2 threads on a busy 2-core machine and 24 µs with one).  The limit is the
    process's: runs at the same time in several threads share one, set by the first to start and
    lifted (the original thread counts back) when the last one ends.  ``scipy``: the work may use
    scipy.linalg (imported at its first use, solver.math.lazy), which is then imported first, so that
    its BLAS is limited too; False for a run that never factors a matrix in Python (an open tree
    stepped in C, :meth:`solver.analysis.dynamics.Run.factors`: no scipy at all).  A run that
    imports scipy.linalg inside the limit anyway (a fallback to the Python loop) runs scipy's BLAS
    with its own thread count until it ends; the next run limits it."""
    if scipy and "scipy.linalg" not in sys.modules:
        importlib.import_module("scipy.linalg")
    with _lock:
        if _active["count"] == 0:
            _active["limiter"] = _controller("scipy.linalg" in sys.modules).limit(limits=1, user_api="blas")
        _active["count"] += 1
    try:
        yield
    finally:
        with _lock:
            _active["count"] -= 1
            if _active["count"] == 0:
                _active["limiter"].restore_original_limits()
                _active["limiter"] = None
