"""Linearization, natural frequencies, damping ratios and mode shapes (Bae, Yang & Seo (2003)) against
closed-form small-oscillation results, the FFT of nonlinear runs, and across formulations."""
import os
import sys

import numpy as np
import pytest

import solver
from solver.analysis.frequency import dominant_frequency

from relative_models import double_pendulum_3d

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import make_samples  # noqa: E402


G = 9.81
FORMULATIONS = ("cartesian", "relative")
SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")
HANG = (np.cos(-np.pi / 4), 0.0, 0.0, np.sin(-np.pi / 4))     # body x along −y
STAND = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))      # body x along +y


def rel(a, b):
    return abs(a - b) / abs(b)


# ---- models ---------------------------------------------------------------------------------------
def pendulum(mass=2.0, inertia=0.05, d=0.7, damping=0.0):
    """Compound pendulum hanging from a pivot at the origin, CM at distance d below it."""
    m = solver.Model(name="pendulum", gravity=(0, -G, 0))
    m.add_body("rod", mass=mass, inertia=(1e-3, inertia, inertia), position=(0, -d, 0), orientation=HANG)
    m.add_joint("pivot", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    if damping:
        m.add_rotational_spring_damper("damper", "pivot", damping=damping)
    return m


def double_pendulum(m1, I1, c1, L1, m2, I2, c2):
    """Two hanging links: link 1 pivots at the origin (CM c1 below), link 2 at the elbow L1 below
    (CM c2 below the elbow); revolute joints about z."""
    m = solver.Model(name="double", gravity=(0, -G, 0))
    m.add_body("upper", mass=m1, inertia=(1e-3, I1, I1), position=(0, -c1, 0), orientation=HANG)
    m.add_body("lower", mass=m2, inertia=(1e-3, I2, I2), position=(0, -L1 - c2, 0), orientation=HANG)
    m.add_joint("shoulder", "revolute", "ground", "upper", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("elbow", "revolute", "upper", "lower", origin=(0, -L1, 0), axis=(0, 0, 1))
    return m


def spring_chain(n, mass, k):
    """n equal masses on prismatic joints along x (at x = 1, 2, …), springs ground–1, 1–2, …,
    unloaded at the start; no gravity."""
    m = solver.Model(name="chain", gravity=(0, 0, 0))
    prev, prev_x = "ground", 0.0
    for i in range(1, n + 1):
        name = f"m{i}"
        m.add_body(name, mass=mass, inertia=(1e-3, 1e-3, 1e-3), position=(float(i), 0, 0))
        m.add_joint(f"slide{i}", "prismatic", "ground", name, origin=(float(i), 0, 0), axis=(1, 0, 0))
        m.add_spring_damper(f"s{i}", prev, name, point_i=(prev_x, 0, 0), point_j=(float(i), 0, 0), stiffness=k)
        prev, prev_x = name, float(i)
    return m


def standing_parallelogram(mA, IA, mB, IB, L, d, k):
    """Closed loop: links A and C (mass mA, inertia IA about the CM) standing up from ground
    pivots (0, 0) and (d, 0), coupler B (mB, IB) horizontal at y = L; a horizontal spring k from
    the coupler's CM to ground, unloaded at the start; gravity −y (destabilizing)."""
    m = solver.Model(name="parallelogram", gravity=(0, -G, 0))
    for name, x in (("A", 0.0), ("C", d)):
        m.add_body(name, mass=mA, inertia=(1e-3, IA, IA), position=(x, L / 2, 0), orientation=STAND)
    m.add_body("B", mass=mB, inertia=(1e-3, IB, IB), position=(d / 2, L, 0))
    z = (0, 0, 1)
    m.add_joint("J1", "revolute", "ground", "A", origin=(0, 0, 0), axis=z)
    m.add_joint("J2", "revolute", "A", "B", origin=(0, L, 0), axis=z)
    m.add_joint("J3", "revolute", "B", "C", origin=(d, L, 0), axis=z)
    m.add_joint("J4", "revolute", "ground", "C", origin=(d, 0, 0), axis=z)
    m.add_spring_damper("spring", "B", "ground", point_i=(d / 2, L, 0), point_j=(d / 2 + 0.3, L, 0), stiffness=k)
    return m


# ---- closed-form frequencies ----------------------------------------------------------------------
@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_single_pendulum(formulation):
    """I_O θ̈ + m g d θ = 0, I_O = I + m d²."""
    mass, inertia, d = 2.0, 0.05, 0.7
    lin = solver.linearize(pendulum(mass, inertia, d), formulation=formulation)
    f = np.sqrt(mass * G * d / (inertia + mass * d * d)) / (2 * np.pi)
    assert len(lin.frequencies_hz) == 1
    assert rel(lin.frequencies_hz[0], f) < 1e-6
    assert abs(lin.damping_ratios[0]) < 1e-9


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_double_pendulum(formulation):
    """Absolute angles φ1, φ2: M = [[I1 + m1 c1² + m2 L1², m2 L1 c2], [m2 L1 c2, I2 + m2 c2²]],
    K = diag(g (m1 c1 + m2 L1), g m2 c2); det(K − ω² M) = 0 is
    det(M) ω⁴ − (M11 K22 + M22 K11) ω² + K11 K22 = 0."""
    m1, I1, c1, L1, m2, I2, c2 = 1.5, 0.02, 0.3, 0.6, 0.8, 0.01, 0.25
    lin = solver.linearize(double_pendulum(m1, I1, c1, L1, m2, I2, c2), formulation=formulation)
    M11, M12, M22 = I1 + m1 * c1**2 + m2 * L1**2, m2 * L1 * c2, I2 + m2 * c2**2
    K11, K22 = G * (m1 * c1 + m2 * L1), G * m2 * c2
    a, b, c = M11 * M22 - M12**2, M11 * K22 + M22 * K11, K11 * K22
    w2 = np.sort([(b - np.sqrt(b * b - 4 * a * c)) / (2 * a), (b + np.sqrt(b * b - 4 * a * c)) / (2 * a)])
    f = np.sqrt(w2) / (2 * np.pi)
    assert np.all(np.abs(lin.frequencies_hz - f) < 1e-6 * f)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_spring_chain_frequencies_and_mode_shapes(formulation):
    """Fixed–free chain of n equal masses and springs: ω_j = 2 √(k/m) sin((2j − 1) π / (4n + 2)),
    mode j: u_i ∝ sin((2j − 1) i π / (2n + 1)), i = 1..n."""
    n, mass, k = 3, 0.5, 200.0
    lin = solver.linearize(spring_chain(n, mass, k), formulation=formulation)
    j = np.arange(1, n + 1)
    f = 2 * np.sqrt(k / mass) * np.sin((2 * j - 1) * np.pi / (4 * n + 2)) / (2 * np.pi)
    assert np.all(np.abs(lin.frequencies_hz - f) < 1e-6 * f)
    assert lin.body_names == ["m1", "m2", "m3"]
    i = np.arange(1, n + 1)
    for mode in range(n):
        u = np.sin((2 * mode + 1) * i * np.pi / (2 * n + 1))
        dx = lin.body_modes[mode][:, 0]
        assert np.max(np.abs(dx.imag)) < 1e-9
        assert np.allclose(dx.real / dx.real[np.argmax(np.abs(dx))], u / u[np.argmax(np.abs(u))], atol=1e-6)
        assert np.max(np.abs(lin.body_modes[mode][:, 1:])) < 1e-9       # no other motion


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_parallelogram_fourbar_energy_method(formulation):
    """Closed loop, one mode: links A and C turn by θ, coupler B translates by L θ.  Energy
    method about θ: T = ½ [2 (I_A + m_A (L/2)²) + m_B L²] θ̇², V = ½ k (L θ)² + g (2 m_A L/2 + m_B L)
    cos θ, so J = 2 I_A + m_A L²/2 + m_B L², K = k L² − g L (m_A + m_B), f = √(K/J)/2π."""
    mA, IA, mB, IB, L, d, k = 2.0, 0.06, 1.5, 0.03, 0.6, 0.5, 500.0
    lin = solver.linearize(standing_parallelogram(mA, IA, mB, IB, L, d, k), formulation=formulation)
    J = 2 * IA + mA * L**2 / 2 + mB * L**2
    K = k * L**2 - G * L * (mA + mB)
    assert len(lin.frequencies_hz) == 1
    assert rel(lin.frequencies_hz[0], np.sqrt(K / J) / (2 * np.pi)) < 1e-6
    assert rel(lin.M[0, 0] / lin.K[0, 0], J / K) < 1e-6       # M̂/K̂ is coordinate-free (1 DOF)


# ---- damping --------------------------------------------------------------------------------------
@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_damped_oscillator(formulation):
    """m ẍ + c ẋ + k x = 0: ω_n = √(k/m), ζ = c / (2 √(k m))."""
    k, c, mass = 400.0, 4.0, 1.3
    m = solver.Model(name="osc", gravity=(0, 0, 0))
    m.add_body("m", mass=mass, inertia=(1e-3, 1e-3, 1e-3), position=(1.1, 0, 0))
    m.add_joint("slide", "prismatic", "ground", "m", origin=(1.1, 0, 0), axis=(1, 0, 0))
    m.add_spring_damper("S", "ground", "m", point_i=(0, 0, 0), point_j=(1.1, 0, 0), stiffness=k, damping=c)
    lin = solver.linearize(m, formulation=formulation)
    assert rel(lin.frequencies_hz[0], np.sqrt(k / mass) / (2 * np.pi)) < 1e-6
    assert rel(lin.damping_ratios[0], c / (2 * np.sqrt(k * mass))) < 1e-6
    assert rel(lin.C[0, 0] / lin.M[0, 0], c / mass) < 1e-6


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_damped_pendulum(formulation):
    """I_O θ̈ + c θ̇ + m g d θ = 0 (rotational damper at the pivot): ζ = c / (2 √(m g d I_O))."""
    mass, inertia, d, c = 2.0, 0.05, 0.7, 0.9
    lin = solver.linearize(pendulum(mass, inertia, d, damping=c), formulation=formulation)
    IO, K = inertia + mass * d * d, mass * G * d
    assert rel(lin.frequencies_hz[0], np.sqrt(K / IO) / (2 * np.pi)) < 1e-6
    assert rel(lin.damping_ratios[0], c / (2 * np.sqrt(K * IO))) < 1e-6
    lam = lin.eigenvalues[0]
    wn = np.sqrt(K / IO)
    zeta = c / (2 * np.sqrt(K * IO))
    assert abs(lam - complex(-zeta * wn, wn * np.sqrt(1 - zeta**2))) < 1e-6 * wn


# ---- formulations agree at equilibrium; mode shapes as body motions -------------------------------
def test_relative_and_cartesian_agree_at_equilibrium():
    """3-D double pendulum (second axis (1, 1, 0)/√2), started horizontal with a spin: linearized at
    its static equilibrium the two formulations give the same frequencies (1e-6 relative) and the
    same body motions of each mode (up to scale)."""
    lins = [solver.linearize(double_pendulum_3d(), state="equilibrium", formulation=f) for f in FORMULATIONS]
    fc, fr = (lin.frequencies_hz for lin in lins)
    assert len(fc) == 2 and np.all(np.abs(fc - fr) < 1e-6 * fc)
    assert np.allclose(lins[0].body_positions, lins[1].body_positions, atol=1e-9)     # same equilibrium
    for mode in range(2):
        a, b = (lin.body_modes[mode].ravel() for lin in lins)
        k = np.argmax(np.abs(a))
        assert np.allclose(a / a[k], b / b[k], atol=1e-6)


def test_body_poses_follow_the_mode():
    """Pendulum mode: the CM moves as a rigid rotation about the pivot, δr = δθ × r_CM; the
    animated pose rotates the body about z."""
    lin = solver.linearize(pendulum(), formulation="relative")
    dr, dth = np.real(lin.body_modes[0][0, :3]), np.real(lin.body_modes[0][0, 3:])
    assert np.allclose(dth[:2], 0.0, atol=1e-12) and abs(dth[2]) > 0
    assert np.allclose(dr, np.cross(dth, lin.body_positions[0]), atol=1e-9)
    s = 0.1 / dth[2]
    r, A = lin.body_poses(0, s)["rod"]
    Rz = np.array([[np.cos(0.1), -np.sin(0.1), 0], [np.sin(0.1), np.cos(0.1), 0], [0, 0, 1]])
    assert np.allclose(A, Rz @ lin.body_rotations[0], atol=1e-12)
    assert np.allclose(r, lin.body_positions[0] + s * dr, atol=1e-12)


def test_bad_state_is_a_model_error():
    with pytest.raises(solver.ModelError, match="state"):
        solver.linearize(pendulum(), state="resting")


# ---- FFT check on the paper's four-bar --------------------------------------------------------------
def test_dominant_frequency_of_known_tones():
    """A 3 s record at 100 Hz (raw resolution 1/3 Hz): the interpolated peak is within 1 % of a bin."""
    t = 0.01 * np.arange(301)
    for f in (1.3, 5.0249, 17.77):
        x = 0.2 + np.sin(2 * np.pi * f * t + 0.4) + 0.05 * np.sin(2 * np.pi * 3.1 * f * t)
        assert abs(dominant_frequency(t, x) - f) < 0.01 / 3.0
    assert solver.analysis.dominant_frequency is dominant_frequency
    with pytest.raises(solver.ModelError, match="uniformly"):
        dominant_frequency(t ** 2, np.sin(t))
    with pytest.raises(solver.ModelError, match="constant"):
        dominant_frequency(t, np.ones_like(t))


@pytest.mark.slow
def test_fourbar_spring_sample_linear_vs_fft():
    """Bae, Yang & Seo (2003) §5.1: the four-bar with a spring (sample, geometry documented in
    tools/make_samples.py).  Linearized at θ1 = θ2 = θ3 = 0 (its static equilibrium) the frequency
    equals the energy-method value J, K of the sample's data, and the FFT peak of link C's rotation
    in the nonlinear run after the initial kick of link A (sample settings: 3 s, output every
    0.01 s) is within 0.5 % (the paper: 5.04 Hz linearized, 5.045 Hz by FFT)."""
    model = solver.load_model(os.path.join(SAMPLES, "fourbar_spring.mbs.json"))
    lin = solver.linearize(model, state="equilibrium")
    mA, IA, mB, L, h, k = 7.707, 0.16176083, 3.946, 0.5, 0.47, 1e4
    J = 2 * (IA + mA * L**2 / 4) + mB * L**2
    K = k * h**2 + G * L * (mA + mB)
    f_energy = np.sqrt(K / J) / (2 * np.pi)
    assert rel(lin.frequencies_hz[0], f_energy) < 1e-6
    assert abs(lin.frequencies_hz[0] - 5.0249) < 1e-4
    res = solver.simulate(model)
    A = res.body_rotation("link_C")
    angle = np.unwrap(np.arctan2(A[:, 1, 0], A[:, 0, 0]))
    assert 0.01 < np.ptp(angle) < 0.1                          # a small oscillation (≈ ±1.8°)
    f_fft = dominant_frequency(res.t, angle)
    assert rel(f_fft, lin.frequencies_hz[0]) < 0.005


def test_cli_linearize_at_equilibrium(capsys):
    """`mbs linearize MODEL --equilibrium` prints the mode table at the static equilibrium."""
    from solver import cli
    assert cli.main(["linearize", os.path.join(SAMPLES, "fourbar_spring.mbs.json"), "--equilibrium"]) == 0
    out = capsys.readouterr().out
    assert "at the stable static equilibrium (descent, 0 iterations): 1 mode" in out and "5.024902" in out


# ---- flexible bodies --------------------------------------------------------------------------------
STEEL_BEAM = {"section": {"height": 0.02, "width": 0.03}, "material": {"density": 7800.0, "youngs": 2e11},
              "elements": 10, "interface": "craig_bampton"}


def test_flexible_cantilever_frequencies():
    """A flexible beam clamped (fixed joint) at one end, Craig–Bampton modes with the clamp node as
    interface: the linearized frequencies are the FE cantilever's (eigh(K, M) with node 0 fixed) to
    2e-4 — the floating frame carries the sections' rigid rotary inertia ρ L I, which the
    Euler–Bernoulli FE model neglects (a relative effect ~ I/(A L²) = 3e-5) — and Euler–Bernoulli's
    β_n² √(E I / ρ A L⁴), β₁ = 1.8751, β₂ = 4.6941, for both bending planes to 0.5 %."""
    from solver.flexible.compile import mesh_of
    m = solver.Model(name="cantilever", gravity=(0, 0, 0))
    m.add_flexible_beam("beam", (0, 0, 0), (1.0, 0, 0), modes=4, **STEEL_BEAM)
    m.add_joint("clamp", "fixed", "ground", "beam", origin=(0, 0, 0))
    lin = solver.linearize(m)
    fe = mesh_of(m.flexible_bodies["beam"]).frequencies(fixed_nodes=[0])[:4] / (2 * np.pi)
    assert np.allclose(lin.frequencies_hz, fe, rtol=2e-4)
    h, b, E, rho = 0.02, 0.03, 2e11, 7800.0
    scale = [np.sqrt(E * I / (rho * h * b)) / (2 * np.pi) for I in (b * h**3 / 12, h * b**3 / 12)]
    analytic = sorted(beta**2 * s for beta in (1.87510407, 4.69409113) for s in scale)
    assert np.allclose(lin.frequencies_hz, analytic, rtol=5e-3)
    assert np.allclose(lin.damping_ratios, 0.0, atol=1e-6)


def test_pinned_hub_with_flexible_beam_frequencies():
    """A rigid hub (J = 0.05 kg m² about its pin) with a flexible beam welded to it: the FE model
    of the same system (beam mesh, node 0 pinned — translations and tilts fixed — with J added to
    its θz inertia) gives the reference.  The linearization has the free rotation (≈ 0 Hz), the
    out-of-plane cantilever mode and the in-plane hub–beam modes; 6 Craig–Bampton modes are a Ritz
    basis, so its frequencies are upper bounds within 0.1 %."""
    import scipy.linalg
    from solver.flexible.compile import mesh_of
    J = 0.05
    m = solver.Model(name="hub", gravity=(0, 0, 0))
    m.add_body("hub", mass=1.0, inertia=(J, J, J), position=(0, 0, 0))
    m.add_joint("pin", "revolute", "ground", "hub", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_flexible_beam("beam", (0, 0, 0), (1.0, 0, 0), modes=6, **STEEL_BEAM)
    m.add_joint("weld", "fixed", "hub", "beam", origin=(0, 0, 0))
    lin = solver.linearize(m)
    mesh = mesh_of(m.flexible_bodies["beam"])
    M = mesh.M.copy()
    M[5, 5] += J
    free = np.arange(5, mesh.ndof)
    lam = scipy.linalg.eigh(mesh.K[np.ix_(free, free)], M[np.ix_(free, free)], eigvals_only=True)
    fe = np.sqrt(np.clip(lam[:4], 0.0, None)) / (2 * np.pi)
    assert lin.frequencies_hz[0] < 1e-2 and fe[0] < 1e-2          # the free rotation (finite differences)
    f_lin = lin.frequencies_hz[1:4]
    assert np.all(f_lin > fe[1:] * (1 - 2e-4)) and np.allclose(f_lin, fe[1:], rtol=1e-3)


def hanging_flexible_fourbar():
    """The flexible four-bar of Kim & Yoo (1997) (tools/make_samples.py: 1 m steel cranks, copper
    coupler as 10 elements / 2 free–free modes) drawn hanging, cranks pointing down: a stable equilibrium a
    few Newton steps away (the coupler's sag)."""
    m = solver.Model(name="fourbar-hanging", gravity=(0.0, -G, 0.0))
    a = make_samples.SINGULAR_LINK
    A, D = np.zeros(3), np.array([a, 0.0, 0.0])
    B, C = A - (0.0, a, 0.0), D - (0.0, a, 0.0)
    make_samples.link(m, "crank", A, B)
    make_samples.link(m, "rocker", D, C)
    m.add_flexible_beam("coupler", tuple(B), tuple(C), section=make_samples.SINGULAR_COUPLER_SECTION,
                        material=make_samples.COPPER, elements=10, modes=2, interface="free")
    for name, bi, bj, P in (("A", "ground", "crank", A), ("B", "crank", "coupler", B),
                            ("C", "coupler", "rocker", C), ("D", "ground", "rocker", D)):
        m.add_joint(name, "revolute", bi, bj, origin=tuple(P), axis=(0, 0, 1))
    return m, B, C


@pytest.mark.slow
def test_flexible_fourbar_linear_vs_fft():
    """Linearized at its hanging equilibrium the flexible four-bar has the swing mode (0.54 Hz) and
    two coupler modes coupled with the cranks; a short self-equilibrated force pulse on the coupler
    (+P at the middle, −P/2 at each end: no net force or moment, so the swing stays quiet) started
    from the equilibrium rings the first one: the FFT peak of the first modal coordinate over 0.3 s
    equals the linearized frequency within 0.5 % (and FFT resolution 1/0.3 s is 20 % of it: the
    peak interpolation does the rest)."""
    m, B, C = hanging_flexible_fourbar()
    lin = solver.linearize(m, state="equilibrium")
    assert len(lin.frequencies_hz) == 3 and 0.4 < lin.frequencies_hz[0] < 0.7
    pulse = "exp(-((t - 0.004) / 0.0015)^2)"
    m.add_force("P_mid", "coupler", force=(0, f"20*{pulse}", 0), point=tuple((B + C) / 2))
    m.add_force("P_B", "coupler", force=(0, f"-10*{pulse}", 0), point=tuple(B))
    m.add_force("P_C", "coupler", force=(0, f"-10*{pulse}", 0), point=tuple(C))
    res = solver.simulate(m, t_end=0.3, output_step=0.001, rtol=1e-6, atol=1e-8, partitioning="qr",
                          initial="equilibrium")
    a1 = res.modal_coordinates("coupler")[:, 0]
    after = res.t > 0.01
    assert rel(dominant_frequency(res.t[after], a1[after]), lin.frequencies_hz[1]) < 0.005


def test_flexible_poses_follow_the_mode():
    """Pinned hub with a welded flexible beam: per mode, the nodes' elastic displacements are
    δu = Φ δa with δa the mode's rows of the beam's modal coordinates; and flexible_poses(mode, s)
    equals the exact configuration at q₀ + s·Re(mode) (frame from r, p; u = Φ a) to O(s²).  A
    rigid-only model has no flexible poses."""
    from solver.flexible.floating import flexible_outputs
    from solver.formulations.cartesian import CartesianSystem
    m = solver.Model(name="hub", gravity=(0, 0, 0))
    m.add_body("hub", mass=1.0, inertia=(0.05, 0.05, 0.05), position=(0, 0, 0))
    m.add_joint("pin", "revolute", "ground", "hub", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_flexible_beam("beam", (0, 0, 0), (1.0, 0, 0), modes=4, **STEEL_BEAM)
    m.add_joint("weld", "fixed", "hub", "beam", origin=(0, 0, 0))
    lin = solver.linearize(m)
    fb = CartesianSystem(m).flex[0]
    assert lin.flexible_names == ["beam"]
    phi = fb.body.node_phi
    for mode in range(len(lin.frequencies_hz)):
        da = lin.mode_shapes[fb.ao:fb.ao + fb.k, mode]
        assert np.allclose(lin.node_modes[0][mode], np.einsum("nik,k->ni", phi, da), rtol=0, atol=1e-12)
    mode, s = 1, 1e-4
    shape = np.real(lin.mode_shapes[:, mode])
    assert np.abs(shape[fb.o + 3:fb.o + 7]).max() > 1e-3       # the frame rotates in this mode
    exact = flexible_outputs([fb], lin.q + s * shape)
    r, A, u = lin.flexible_poses(mode, s)["beam"]
    assert np.allclose(r, exact["flex_r"][0], rtol=0, atol=1e-9)
    assert np.allclose(A, exact["flex_A"][0], rtol=0, atol=1e-7)
    assert np.allclose(u, exact["flex_disp"], rtol=0, atol=1e-12)
    assert np.abs(u).max() > 1e-6
    assert solver.linearize(pendulum(), formulation="cartesian").flexible_poses(0, 0.1) == {}
