"""Thread settings of the solver's numerical work."""
import functools

from threadpoolctl import ThreadpoolController


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    """The BLAS libraries loaded (numpy's and scipy's, imported by the solver before any run): found
    once — a fresh scan of the loaded libraries costs ≈ 1.4 ms, a fixed cost of every run."""
    return ThreadpoolController()


def single_threaded_blas():
    """The solver's matrices are small: BLAS threads only add synchronisation (a 12×12 LU solve
    took 4.5 ms with 2 threads on a busy 2-core machine and 24 µs with one)."""
    return _controller().limit(limits=1, user_api="blas")
