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


def limit_step(ode, h_max):
    """Make ``h_max`` the largest step of a running scipy solver from its next step on.  The
    Runge–Kutta, BDF and Radau solvers read ``max_step`` at every step; LSODA reads its HMAX
    (RWORK(6)) only at a call with ISTATE = 3 ("continue with changed optional inputs", ODEPACK),
    which its wrapper's arguments carry (scipy.integrate._ode.lsoda: ``call_args`` [rtol, atol,
    itask, istate, rwork, iwork, jt], ``rwork``)."""
    ode.max_step = h_max
    integrator = getattr(getattr(ode, "_lsoda_solver", None), "_integrator", None)
    if integrator is None or integrator.call_args[3] != 2:
        return
    unlimited = (0.0, float("inf"))                            # LSODA's 0 (and scipy's inf): no limit
    if integrator.rwork[5] != h_max and not (integrator.rwork[5] in unlimited and h_max in unlimited):
        integrator.rwork[5] = h_max if h_max < float("inf") else 0.0
        integrator.call_args[3] = 3

from .generalized_alpha import GeneralizedAlpha  # noqa: E402

__all__ = ["INTEGRATORS", "GeneralizedAlpha", "limit_step"]
