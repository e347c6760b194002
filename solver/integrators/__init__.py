"""Time integrators for the independent coordinates (state y = [z, ż]).

scipy's ODE solvers are used where they fit (Kim & Yoo (1997) uses an Adams predictor–corrector, Lee, Lee & Bae (2013) a
BDF):

  ``auto``    (the default) DOP853 stepped in compiled code when the run uses generated kernels and
              nothing in its right-hand side needs Python (:mod:`solver.analysis.segments`), else adams
  ``adams``   LSODA — Adams–Moulton variable step/order, switching to BDF when the problem turns stiff
  ``rk``      DOP853 — explicit Runge–Kutta 8(5,3) (alias ``dop853``)
  ``rk45``    Dormand–Prince 5(4) (in compiled code where ``auto`` would be)
  ``bdf``     variable-order BDF (implicit, for stiff models)
  ``radau``   Radau IIA order 5 (implicit)
  ``galpha``  generalized-α on the index-3 DAE with the analytic (Φ_qᵀλ)_q (stiff models;
              fixed step ``max_step``, default 1 ms; see ``generalized_alpha.py``)
"""
from scipy.integrate import BDF, DOP853, LSODA, RK45, Radau

INTEGRATORS = {"adams": LSODA, "rk": DOP853, "dop853": DOP853, "rk45": RK45, "bdf": BDF, "radau": Radau}

from .generalized_alpha import GeneralizedAlpha  # noqa: E402

__all__ = ["INTEGRATORS", "GeneralizedAlpha"]
