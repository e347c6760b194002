"""Thread settings of the solver's numerical work."""
import contextlib
import functools
import threading

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_active = {"count": 0, "limiter": None}     # runs inside single_threaded_blas, and the limit they share


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    """The BLAS libraries loaded (numpy's and scipy's, imported by the solver before any run): found
    once — a fresh scan of the loaded libraries costs ≈ 1.4 ms, a fixed cost of every run."""
    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas():
    """The solver's matrices are small: BLAS threads only add synchronisation (a 12×12 LU solve
    took 4.5 ms with 2 threads on a busy 2-core machine and 24 µs with one).  The limit is the
    process's: runs at the same time in several threads share one, set by the first to start and
    lifted (the original thread counts back) when the last one ends."""
    with _lock:
        if _active["count"] == 0:
            _active["limiter"] = _controller().limit(limits=1, user_api="blas")
        _active["count"] += 1
    try:
        yield
    finally:
        with _lock:
            _active["count"] -= 1
            if _active["count"] == 0:
                _active["limiter"].restore_original_limits()
                _active["limiter"] = None
