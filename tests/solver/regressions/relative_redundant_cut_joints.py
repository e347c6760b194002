"""Fuzz seed 1020 (bench/fuzz.py --bodies 3), minimized: the relative formulation loses a degree of freedom.

Body b0 on a screw joint to ground, body b1 welded to b0 by two loop-closing joints, a fixed joint
and an in-plane joint (whose one equation the fixed joint implies), no gravity, no loads, the pair
spinning on the screw.  The Cartesian formulation finds the in-plane equation redundant (DOF 1) and
the pair keeps screwing at -1.3137 rad/s with constant energy.  The relative formulation (codegen
off or on, any integrator) finds no redundant equation, so DOF 0: the initial velocities are
projected to zero and nothing moves — status "ok", every position wrong (1.5 cm off at 0.1 s).
``solver.check_model`` (which compiles the relative formulation) reports dof 0 as well.  With the
in-plane joint replaced by a spherical or revolute one the relative run still stays at rest (its
redundant rows are found, the velocities still vanish); with a distance joint it agrees.  Run from
the repository root:

    .venv/bin/python tests/solver/regressions/relative_redundant_cut_joints.py
"""
import sys

sys.path.insert(0, ".")
import solver  # noqa: E402
from solver.model.model import model_from_dict  # noqa: E402

MODEL = {'name': 'random_1020',
 'gravity': [0.0, 0.0, 0.0],
 'bodies': [{'name': 'b0',
             'mass': 0.04204031001772502,
             'inertia': [1.4753379129178726e-05,
                         5.620972755250521e-05,
                         5.3604196716207977e-05,
                         0.0,
                         0.0,
                         0.0],
             'position': [-0.1177184223823653, 0.07502391197090166, -0.10458031628970915],
             'orientation': [0.23403035418669782,
                             -0.25893677499864926,
                             -0.8924513064719768,
                             -0.2858534684921796],
             'velocity': [-0.06576275870068275, -0.08567467565704402, -0.0787082187298727],
             'angular_velocity': [-1.3136845275848716, 0.0, 0.0],
             'geometry': {'shape': 'none'}},
            {'name': 'b1',
             'mass': 0.0530459794627012,
             'inertia': [4.3007327655950376e-05, 6.725144358619516e-05, 8.28575483940912e-05, 0.0, 0.0, 0.0],
             'position': [-0.1824922807651767, 0.10572364912813347, -0.14602057552890688],
             'orientation': [0.29093229244721325,
                             0.38104478088238464,
                             0.8660515128295054,
                             -0.1418381235755391],
             'velocity': [-0.06576275870068275, -0.1401141030386841, -0.1190379884342505],
             'angular_velocity': [-1.3136845275848716, 0.0, 0.0],
             'geometry': {'shape': 'none'}}],
 'markers': [],
 'joints': [{'name': 'j0',
             'type': 'screw',
             'body_i': 'ground',
             'body_j': 'b0',
             'origin': [-0.07923809479857893, 0.01510981762241076, -0.0393632311691653],
             'axis': [1.0, 0.0, 0.0],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.3145348754220075,
             'origin2': [0.0, 0.0, 0.0],
             'length': None},
            {'name': 'loop0',
             'type': 'inplane',
             'body_i': 'b0',
             'body_j': 'b1',
             'origin': [-0.167317552569986, 0.10996870734792474, -0.09552798018744384],
             'axis': [-0.18179941303923344, 0.6218417752723872, -0.7617491581516033],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.01,
             'origin2': [0.0, 0.0, 0.0],
             'length': None},
            {'name': 'loop1',
             'type': 'fixed',
             'body_i': 'b1',
             'body_j': 'b0',
             'origin': [-0.1247129317112905, 0.06967314490763621, -0.10308942539970073],
             'axis': [0.31323711418128747, 0.7439343299337146, 0.5902916423645639],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.01,
             'origin2': [0.0, 0.0, 0.0],
             'length': None}],
 'forces': [],
 'drivers': []}


def runs(t_end=0.1):
    """The Cartesian and the relative run of MODEL at rtol 1e-10 (generic path, DOP853)."""
    model = model_from_dict(MODEL)
    options = dict(codegen="off", integrator="dop853", rtol=1e-10, atol=1e-12, t_end=t_end, output_step=0.02)
    return tuple(solver.simulate(model, formulation=f, **options) for f in ("cartesian", "relative"))


if __name__ == "__main__":
    for res in runs():
        print(res.meta.get("formulation", ""), "ω_x(b0):", res.body_angular_velocity("b0")[:, 0],
              "energy:", res.energy["total"][[0, -1]], "redundant:", res.redundant_equations)
    print("check_model dof:", solver.check_model(model_from_dict(MODEL)).dof)
