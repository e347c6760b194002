"""What drawing a contact group's forces costs (app/contact_arrows.py): n spheres of radius 0.05 m
packed on a cubic lattice 0.0995 m apart (every neighbour pair in contact, 0.5 mm deep), in one
contact group, at a few output points (the lattice jittered by 0.1 mm).

Columns: the touching pairs per output point; the CPU time per output point of the results'
re-evaluation of the group's pairs (``Results.contact_pairs`` through
:func:`solver.contact.group.pair_table`, what the arrows and the group's plots read, done once per
run); of choosing a frame's arrows (``ContactArrows.drawn``: the MAX_ARROWS largest); and of one
offscreen render (600 × 400, VTK) of the frame's arrows, with the MAX_ARROWS bound and with every
touching pair drawn.  CPU seconds of this process (``time.process_time``, best of the repeats; the
renderer's threads included); the load average is printed before and after.

    .venv/bin/python bench/contact_arrows.py [--n 10 100 1000] [--frames 3] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402
from solver.contact.element import contact_history  # noqa: E402
from solver.contact.group import group_spec  # noqa: E402
from solver.forces import BodyFrames  # noqa: E402

RADIUS, SPACING = 0.05, 0.0995


def lattice(n):
    side = int(np.ceil(n ** (1 / 3)))
    k = np.arange(n)
    return SPACING * np.column_stack([k % side, k // side ** 2, (k // side) % side]).astype(float)


def group(n):
    m = solver.Model(name=f"lattice-{n}")
    for k, r in enumerate(lattice(n)):
        m.add_body(f"s{k}", mass=0.5, inertia=(5e-4,) * 3, position=tuple(r),
                   geometry={"shape": "sphere", "radius": RADIUS})
    m.add_contact_group("spheres", [f"s{k}" for k in range(n)], stiffness=1e6, damping=50.0, exponent=1.5,
                        friction=(0.3, 0.3))
    return group_spec(m.forces["spheres"], m)


def frames(n, count):
    rng = np.random.default_rng(0)
    r = lattice(n)[None] + rng.normal(0.0, 1e-4, (count, n, 3))
    v = rng.normal(0.0, 0.01, (count, n, 3))
    return BodyFrames(r, np.tile(np.eye(3), (count, n, 1, 1)), v, np.zeros((count, n, 3)))


def best(repeat, call):
    """The least CPU time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--frames", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from vtkmodules.vtkRenderingCore import vtkRenderer, vtkRenderWindow
    import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (the OpenGL render window)
    from app import contact_arrows
    print(f"load average before: {os.getloadavg()}")
    print(f"{'n':>6} {'pairs/pt':>9} {'pairs s/pt':>11} {'drawn ms':>9} {'render ms':>10} {'all ms':>8} "
          f"(MAX_ARROWS = {contact_arrows.MAX_ARROWS})")
    for n in args.n:
        spec, states = group(n), frames(n, args.frames)
        index = {f"s{k}": k for k in range(n)}
        start = time.process_time()
        table = contact_history(spec, index, states, args.frames)[3]
        per_point = (time.process_time() - start) / args.frames
        results = SimpleNamespace(contact_names=[], contact_group_names=["spheres"], t=np.arange(args.frames),
                                  contact_pairs=lambda name: table)
        window = vtkRenderWindow()
        window.SetOffScreenRendering(True)
        window.SetSize(600, 400)
        renderer = vtkRenderer()
        window.AddRenderer(renderer)
        arrows = contact_arrows.ContactArrows(renderer, SimpleNamespace(overlays={}), results, 1.0)
        drawn = best(args.repeat, lambda: arrows.drawn(0))
        renders, bounded = [], contact_arrows.MAX_ARROWS
        for bound in (bounded, 10 ** 9):
            contact_arrows.MAX_ARROWS = bound
            arrows.show(0)
            renderer.ResetCamera()
            window.Render()

            def frame():
                arrows.show(1)
                window.Render()
                arrows.show(0)
                window.Render()
            renders.append(best(args.repeat, frame) / 2)
        contact_arrows.MAX_ARROWS = bounded
        window.Finalize()
        print(f"{n:>6} {len(table.index) / args.frames:>9.0f} {per_point:>11.4f} {1e3 * drawn:>9.3f} "
              f"{1e3 * renders[0]:>10.2f} {1e3 * renders[1]:>8.2f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
