"""Time integrators for the independent coordinates (state y = [z, ż]).

scipy's ODE solvers are used where they fit (Kim & Yoo (1997) uses an Adams predictor–corrector, Lee, Lee & Bae (2013) a
BDF):

  ``auto``    (the default) DOP853 stepped in compiled code when the run uses generated kernels and
              nothing in its right-hand side needs Python (:mod:`solver.analysis.segments`), else adams
  ``adams``   LSODA — Adams–Moulton variable step/order, switching to BDF when the problem turns stiff
              (in compiled code where ``auto`` would be: codegen/adams.c, then codegen/bdf.c)
  ``rk``      DOP853 — explicit Runge–Kutta 8(5,3) (alias ``dop853``; in compiled code where ``auto``
              would be, without its stiffness switch)
  ``rk45``    Dormand–Prince 5(4) (in compiled code where ``auto`` would be)
  ``bdf``     variable-order BDF (implicit, for stiff models)
  ``radau``   Radau IIA order 5 (implicit)
  ``galpha``  generalized-α on the index-3 DAE with the analytic (Φ_qᵀλ)_q (stiff models;
              fixed step ``max_step``, default 1 ms; see ``generalized_alpha.py``)
"""
import importlib

#: integrator setting → scipy.integrate class name (the Python step loop's solvers)
SCIPY_CLASSES = {"adams": "LSODA", "rk": "DOP853", "dop853": "DOP853", "rk45": "RK45", "bdf": "BDF",
                 "radau": "Radau"}


def integrator_class(name):
    """The scipy.integrate solver class of the integrator setting ``name`` (a key of SCIPY_CLASSES),
    imported on use: a run stepped in C never needs scipy.integrate (0.2 s of a first run)."""
    return getattr(importlib.import_module("scipy.integrate"), SCIPY_CLASSES[name])


def limit_step(ode, h_max, h_last):
    """Make ``h_max`` the largest step of a running scipy solver from its next step on (``h_last``:
    its last step).  The Runge–Kutta, BDF and Radau solvers read ``max_step`` at every step.  For
    LSODA the bound is its TCRIT (RWORK(1), which scipy's one-step calls, ITASK = 5, never pass:
    LSODA cuts the very next step to it), set after every accepted step to t + h_max where the limit
    can bind (below 10 h_last, LSODA's largest growth of h per step), else to t_bound: a contact's
    step cap holds on the next step (a ball shot at a thin plate went through it on LSODA before).
    A TCRIT kept at t + h_max on every step whatever h made LSODA's step size collapse to 0 on the
    Geneva sample (at t = 0.0749 s; why is not understood), hence "where it can bind".

    LSODA's HMAX (RWORK(6)) is left alone: it is read only at a call with ISTATE = 3 ("continue with
    changed optional inputs", ODEPACK), applied late (at the next change of step size, STODA), and a
    non-binding HMAX set that way gave a wrong answer with status "ok": fuzz seed 3154 (two bodies,
    spring-dampers), HMAX 0.021 s set at t = 0.131 s while h stayed ≈ 3e-4 s, then at LSODA's switch
    from Adams to BDF (t = 0.2182 s) the accepted step ended 1e-4 … 4e-4 off the state its corrector
    had evaluated (z₀, z₁ moved against their rates); the run re-partitioned there and ended 8e-4 rad
    off (45 × the harness's rotation bound); with TCRIT alone it ends 2e-8 rad off, as at rtol 1e-9."""
    ode.max_step = h_max
    integrator = getattr(getattr(ode, "_lsoda_solver", None), "_integrator", None)
    if integrator is None:
        return
    binding = h_max < 10.0 * h_last
    integrator.rwork[0] = min(ode.t_bound, ode.t + h_max) if binding else ode.t_bound


from .generalized_alpha import GeneralizedAlpha  # noqa: E402

__all__ = ["SCIPY_CLASSES", "integrator_class", "GeneralizedAlpha", "limit_step"]
