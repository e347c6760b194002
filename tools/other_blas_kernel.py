"""Print an OpenBLAS core type other than the one this machine runs (``make test`` runs the
numerically sensitive tests, marked ``numerics``, a second time with OPENBLAS_CORETYPE set to it:
other kernels round differently, as another CPU would).  Nehalem (SSE4.2, no AVX) runs on every
x86-64 processor of the last fifteen years; on a machine already on it, Sandybridge (AVX).  Prints nothing where OpenBLAS is not numpy's BLAS
or the machine is not x86-64 (the second run then uses the machine's own kernel)."""
import platform

from threadpoolctl import threadpool_info

import numpy  # noqa: F401 — loads the BLAS that threadpool_info reports


def main():
    if platform.machine() not in ("x86_64", "AMD64"):
        return
    kernels = [i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"]
    if kernels:
        print("Sandybridge" if kernels[0] == "Nehalem" else "Nehalem")


if __name__ == "__main__":
    main()
