"""Time integrators for the independent coordinates (state y = [z, ż]).

scipy's ODE solvers are used where they fit (paper 3 uses an Adams predictor–corrector, paper 2 a
BDF):

  ``adams``   LSODA — Adams–Moulton variable step/order, switching to BDF when the problem turns stiff
  ``rk``      DOP853 — explicit Runge–Kutta 8(5,3) (alias ``dop853``)
  ``rk45``    Dormand–Prince 5(4)
  ``bdf``     variable-order BDF (implicit, for stiff models)
  ``radau``   Radau IIA order 5 (implicit)
"""
from scipy.integrate import BDF, DOP853, LSODA, RK45, Radau

INTEGRATORS = {"adams": LSODA, "rk": DOP853, "dop853": DOP853, "rk45": RK45, "bdf": BDF, "radau": Radau}

__all__ = ["INTEGRATORS"]
