"""When a partition is renewed (Partition.degraded, solver/partitioning/partition.py): ‖∂q/∂z‖,
the amplification of the independent coordinates, against finite differences of the position
solve and against a null-space basis from scipy; LU partitioning alone through the rigid singular
four-bar's flattened passages in the Python step loop and in the compiled one, which renew the
independent set where ‖∂q/∂z‖ grew fivefold instead of carrying it into the passage; renewals do
not count as restarts that get nowhere."""
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

import solver
from solver.analysis.assembly import assemble_positions
from solver.analysis.dynamics import Run
from solver.analysis.step_rules import STUCK_RESTARTS
from solver.codegen.build import compiler_path
from solver.formulations.cartesian import CartesianSystem
from solver.partitioning.choose import build_partition
from solver.partitioning.partition import Renewal

pytestmark = pytest.mark.numerics   # run again under another BLAS kernel (Makefile)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
FLEXIBLE, RIGID = SAMPLES / "fourbar_singular_flexible.mbs.json", SAMPLES / "fourbar_singular_rigid.mbs.json"


@pytest.fixture(scope="module")
def flexible_state():
    """The flexible singular four-bar (3 independent coordinates: one rigid, two modal) assembled
    at its drawn configuration."""
    system = CartesianSystem(solver.load_model(FLEXIBLE))
    q, _, t = system.initial_state()
    return system, assemble_positions(system, q, t), t


@pytest.mark.parametrize("method", ["lu", "qr", "svd"])
def test_amplification_is_the_norm_of_dq_dz(flexible_state, method):
    """‖N‖_F with N = ∂q/∂z: central differences of the position solve q(z) (step 1e-6, agreement
    1e-6 relative) and K (Vᵀ K)⁻¹ with K a null-space basis of Φ_q (scipy.linalg.null_space, 1e-10)
    at a configuration moved off q_ref; √dof at q_ref for QR and SVD (N = V there)."""
    system, q0, t = flexible_state
    part = build_partition(method, system, q0, t)
    if method != "lu":
        assert part.amplification_ref == pytest.approx(np.sqrt(part.dof), rel=1e-12)
    z = part.z_of(q0) + 0.05 * np.arange(1, part.dof + 1) / part.dof
    q, ev = part.positions(system, z, t, q0)
    K = sla.null_space(ev.jac[part.rows])
    assert K.shape[1] == part.dof
    N = K @ np.linalg.inv(part.V.T @ K)
    assert part.amplification(ev.jac) == pytest.approx(np.linalg.norm(N), rel=1e-10)
    h = 1e-6
    columns = [(part.positions(system, z + h * e, t, q)[0] - part.positions(system, z - h * e, t, q)[0]) / (2 * h)
               for e in np.eye(part.dof)]
    assert part.amplification(ev.jac) == pytest.approx(np.linalg.norm(np.column_stack(columns)), rel=1e-6)
    assert part.amplification(ev.jac) > np.sqrt(part.dof)


@pytest.mark.slow
@pytest.mark.usefixtures("module_codegen_cache")
@pytest.mark.parametrize("integrator, codegen", [("adams", "off"), ("rk45", "on")], ids=["python_loop", "compiled_loop"])
def test_lu_renews_its_set_before_the_singular_passage(integrator, codegen):
    """Rigid singular four-bar, saved settings but partitioning "lu", 2 s (passages at 0.17 s and
    0.97 s).  The first LU set integrates the rocker's Euler parameter e₃ = sin(θ/2), stationary at
    the second passage (θ = −180°); its ‖∂q/∂z‖ grows fivefold by 0.83–0.84 s and the run renews the
    set there, in the Python loop (LSODA) and in the compiled one (DOPRI5 in C: segment.c stops on
    ‖N‖_F).  Energy over the run: 8.5e-6 (adams) and 1.2e-5 (rk45 in C) of the kinetic scale
    measured, asserted 3e-5; without the rule these runs kept the first set through the passage and
    ended 0.12 and 2.3e-3 off."""
    if codegen == "on" and not compiler_path():
        pytest.skip("no C compiler")
    events = []
    run = solver.simulate(solver.load_model(RIGID), partitioning="lu", integrator=integrator, codegen=codegen,
                          on_event=events.append)
    if codegen == "on":
        assert "step loop in C (Dormand–Prince 5(4))" in [e["message"] for e in events]
    renewed = [e["time"] for e in run.events if e["kind"] == "partition" and "lost the motion" in e["message"]]
    assert renewed and 0.8 < renewed[0] < 0.9
    e = run.energy
    assert np.ptp(e["total"]) < 3e-5 * np.max(e["kinetic"])


def test_renewals_are_progress_not_restarts_that_get_nowhere():
    """Run._restarted: renewals of a degraded partition (Partition.degraded's Renewal reasons, after
    accepted steps — the four-bar row on DOP853 renews its QR partition every few long steps near its
    passes) change neither the count of restarts nor the clean stretch; 26 failed solves in a row
    stop the run with 'cannot get past this configuration'."""
    compiled = solver.compile_model(solver.load_model(RIGID), codegen="off", partitioning="qr")
    run = Run(compiled.system, compiled.settings)
    q, _, t = compiled.system.initial_state()
    part = build_partition("qr", compiled.system, q, t)
    renewal = Renewal("the independent coordinates lost the motion")
    assert all(run._restarted(part, None, 7, 3, renewal, q, t) == (7, 3) for _ in range(40))
    restarts = 0
    for _ in range(STUCK_RESTARTS):
        restarts, clean = run._restarted(part, None, restarts, 3, "position Newton did not converge", q, t)
        assert clean == 0
    with pytest.raises(solver.SolverError, match="cannot get past this configuration"):
        run._restarted(part, None, restarts, 0, "position Newton did not converge", q, t)
