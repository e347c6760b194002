"""Fuzz seed 1007 (bench/fuzz.py --bodies 3), minimized: a PartitionError escapes simulate().

A rigid body on a cylindrical joint closed to ground by an in-plane and a distance joint, a flexible
beam hinged to ground, gravity and one applied force.  Every path fails at the first right-hand-side
evaluation (the integrator's constructor, solver/analysis/dynamics.py ``_dynamic``) with
``solver.partitioning.partition.PartitionError: position Newton did not converge (max |Φ| = 1.02e-10)``
— not a SolverError, so callers that catch SolverError (the GUI, the CLI's exit code 3, studies)
see a crash.  Run from the repository root:

    .venv/bin/python tests/solver/regressions/partition_error_escapes.py
"""
import sys

sys.path.insert(0, ".")
import solver  # noqa: E402
from solver.model.model import model_from_dict  # noqa: E402

MODEL = {'name': 'random_1007',
 'gravity': [3.670944916569937, 1.7457570007795022, -8.928191077353729],
 'bodies': [{'name': 'b0',
             'mass': 105.16382115472206,
             'inertia': [0.0001343737834489901,
                         0.00025813530155861043,
                         0.00019490399164261943,
                         0.0,
                         0.0,
                         0.0],
             'position': [0.007228261184246307, 0.002709955272796016, -0.0008557292187782727],
             'orientation': [0.8291761782161238,
                             0.12101834472320573,
                             0.5414315022307504,
                             0.06836193466770171],
             'velocity': [0.0, 0.0, 0.0],
             'angular_velocity': [0.0, 0.0, 0.0],
             'geometry': {'shape': 'none'}}],
 'markers': [],
 'joints': [{'name': 'j0',
             'type': 'cylindrical',
             'body_i': 'b0',
             'body_j': 'ground',
             'origin': [0.004077439647631416, 0.0012265289337621468, 0.0009479592450027692],
             'axis': [-0.6218091429826939, -0.6552176373539769, 0.42900260768834536],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.01,
             'origin2': [0.0, 0.0, 0.0],
             'length': None},
            {'name': 'loop0',
             'type': 'inplane',
             'body_i': 'ground',
             'body_j': 'b0',
             'origin': [0.0022006691768124663, 0.0008502187458775635, -0.0003818773312125356],
             'axis': [-0.7158389973011661, -0.022921976214562163, 0.6978890405711213],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.01,
             'origin2': [0.0, 0.0, 0.0],
             'length': None},
            {'name': 'loop2',
             'type': 'distance',
             'body_i': 'ground',
             'body_j': 'b0',
             'origin': [0.0044181955762538526, 0.0004567818833756935, 0.0004673970453427018],
             'axis': [0.24822725028389236, 0.8235183969474115, 0.5100986983963628],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.01,
             'origin2': [0.005970466503448051, -0.0006423945346187531, 0.0005463421297646449],
             'length': None},
            {'name': 'j_beam',
             'type': 'revolute',
             'body_i': 'ground',
             'body_j': 'beam',
             'origin': [-0.0009827023357806722, -0.0015988881422820795, 0.001655627237522218],
             'axis': [-0.26688250015022524, -0.8637588327142189, 0.4274276664205713],
             'axis2': [1.0, 0.0, 0.0],
             'pitch': 0.01,
             'origin2': [0.0, 0.0, 0.0],
             'length': None}],
 'forces': [{'type': 'force',
             'name': 'f0_force',
             'body': 'b0',
             'force': [455.5899741641846, 244.8228520236121, 305.8530999882189],
             'point': [0.007415691875085046, 0.0041936543777073895, -0.0007205395664282718]}],
 'drivers': [],
 'flexible_bodies': [{'name': 'beam',
                      'start': [-0.0009827023357806722, -0.0015988881422820795, 0.001655627237522218],
                      'end': [0.00630214117845, -0.0004961957047083371, 0.008432581119006192],
                      'z_axis': [-0.3230001832302506, 0.9257587226755898, 0.19657484331237587],
                      'area': 2.2547695398856125e-08,
                      'Iy': 4.2366547316633145e-17,
                      'Iz': 4.2366547316633145e-17,
                      'J': 7.159946496511002e-17,
                      'cy': 7.507945024914628e-05,
                      'cz': 7.507945024914628e-05,
                      'ct': 0.00015015890049829256,
                      'density': 7850.0,
                      'youngs': 210000000000.0,
                      'poisson': 0.3,
                      'elements': 4,
                      'modes': 2,
                      'damping_ratio': 0.0,
                      'interface': 'craig_bampton',
                      'velocity': [0.0, 0.0, 0.0],
                      'angular_velocity': [0.0, 0.0, 0.0],
                      'modes_file': ''}]}

if __name__ == "__main__":
    try:
        solver.simulate(model_from_dict(MODEL), t_end=0.25, codegen="off", formulation="cartesian",
                        integrator="dop853", rtol=1e-10, atol=1e-12)
        print("ran")
    except solver.SolverError as exc:
        print("SolverError (expected kind of failure):", exc)
    except Exception as exc:
        print("escaped:", type(exc).__module__, type(exc).__name__, exc)
