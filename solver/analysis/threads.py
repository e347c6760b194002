"""Thread settings of the solver's numerical work."""
from threadpoolctl import threadpool_limits


def single_threaded_blas():
    """The solver's matrices are small: BLAS threads only add synchronisation (a 12×12 LU solve
    took 4.5 ms with 2 threads on a busy 2-core machine and 24 µs with one)."""
    return threadpool_limits(limits=1, user_api="blas")
