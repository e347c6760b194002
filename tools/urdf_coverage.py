"""Regenerate the URDF coverage table of docs/import.md: every robot file of the installed corpora
(tools/urdf_corpus.py) loaded in MuJoCo and imported with its visual meshes; the mass matrices
and generalized forces compared at random states; our refusals counted by reason beside MuJoCo's
verdict on the file.

    python tools/urdf_coverage.py [--states N] [--print]

Writes the table between the ``urdf-coverage`` markers of docs/import.md (``--print``: prints it
instead).  Takes a few minutes (the meshes of ~1,160 files are read).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools import urdf_corpus  # noqa: E402
from tools.doc_blocks import replace_blocks  # noqa: E402

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "import.md")
BLOCK = "urdf-coverage"          # docs/import.md's block (tools/doc_blocks.py markers)
TOLERANCE = 1e-12
REASONS = [   # (pattern of our message, reason)
    (r"triangle inequality", "inertia breaks the triangle inequality"),
    (r"positive definite", "inertia not positive definite"),
    (r"has no mass .* but moves", "massless link on a moving joint"),
    (r"visual\[\d+\]\.geometry", "malformed visual geometry attribute"),
    (r"expected \d|must be a number|must be finite", "malformed number"),
    (r"not well-formed XML", "malformed XML"),
    (r"upper_limit: must be >=", "lower limit above upper limit"),
    (r"root link|child of joints|not connected", "links not one tree"),
    (r"mesh '", "mesh file"),
]


def reason(message):
    for pattern, text in REASONS:
        if re.search(pattern, message):
            return text
    return message[:80]


def _short(o, roots):
    """Our message with the corpus folder written as ``<corpus>`` (no machine's paths in the docs)."""
    return o.refused.replace(roots[o.corpus], f"<{o.corpus}>")


def survey(states):
    """Every outcome: (group name, Outcome) for the robot files and for pybullet's random_urdfs."""
    out = []
    for corpus in urdf_corpus.corpora():
        for path in urdf_corpus.files(corpus):
            out.append((corpus, urdf_corpus.check(corpus, path, states=states)))
    for path in urdf_corpus.files("pybullet_data", random_urdfs=True):
        out.append(("pybullet_data random_urdfs", urdf_corpus.check("pybullet_data", path, states=states)))
    return out


URDF_NOTE = ("Mass matrices M and generalized forces Q (gravity, velocity terms, joint damping) at {states} random "
             "states per file (joint positions uniform in ±1, velocities standard normal), of the robots whose joints "
             "are all revolute, continuous, prismatic or fixed and that have a degree of freedom; Q relative to the "
             "larger of MuJoCo's largest |Q| and g times its largest |M|.")


def table(outcomes, states, roots=None, why=reason, note=URDF_NOTE,
          odd_heading="Refused here although MuJoCo loads the file (with its geometry removed):"):
    """The coverage tables (Markdown) of ``outcomes`` (group, Outcome); ``roots``: corpus → its
    folder (written ``<corpus>``); ``why``: a refusal's reason from our message; ``note``: the
    paragraph under the tables (``{states}`` filled in)."""
    roots = roots or {c: r for c, (r, _) in urdf_corpus.corpora().items()}
    groups = list(dict.fromkeys(g for g, _ in outcomes))
    lines = ["| files | count | MuJoCo loads | imported | imported of those MuJoCo loads | compared "
             f"| M and Q equal (≤ {TOLERANCE:g} relative) | largest M difference | largest Q difference |",
             "|---|---|---|---|---|---|---|---|---|"]
    for g in groups:
        rows = [o for gg, o in outcomes if gg == g]
        loads = [o for o in rows if o.mujoco_error is None]
        compared = [o for o in rows if o.difference is not None]
        worst = max((o.difference for o in compared), default=None)
        worst_Q = max((o.force_difference for o in compared), default=None)
        both = sum(o.refused is None for o in loads)
        lines.append(f"| {g} | {len(rows)} | {len(loads)} | {sum(o.refused is None for o in rows)} | {both} of "
                     f"{len(loads)} ({100.0 * both / max(len(loads), 1):.0f} %) | {len(compared)} | "
                     f"{sum(max(o.difference, o.force_difference) <= TOLERANCE for o in compared)} | "
                     f"{'—' if worst is None else f'{worst:.1e}'} | {'—' if worst_Q is None else f'{worst_Q:.1e}'} |")
    refused = collections.Counter((g, why(o.refused), o.mujoco_error is None) for g, o in outcomes if o.refused)
    lines += ["", "| files | refused because | files | MuJoCo loads them |", "|---|---|---|---|"]
    for (g, why, mj), n in sorted(refused.items(), key=lambda kv: (groups.index(kv[0][0]), -kv[1])):
        lines.append(f"| {g} | {why} | {n} | {'yes' if mj else 'no'} |")
    odd = [(g, o) for g, o in outcomes if o.refused and o.mujoco_error is None]
    if odd:
        lines += ["", odd_heading, ""]
        lines += [f"* `{os.path.relpath(o.path, roots[o.corpus])}` ({g}): {_short(o, roots)}" for g, o in odd]
    lines += ["", note.format(states=states)]
    return "\n".join(lines)


def write_table(text, block):
    """``text`` as the body of docs/import.md's block ``block``."""
    with open(DOC, encoding="utf-8") as fh:
        doc = fh.read()
    with open(DOC, "w", encoding="utf-8") as fh:
        fh.write(replace_blocks(doc, {block: text}))


def command(argv, description, make_text, block):
    """A coverage script's command line: ``make_text(states)`` written as the body of docs/import.md's
    block ``block`` (``--print``: printed instead)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--states", type=int, default=2)
    parser.add_argument("--print", action="store_true", help="print the table instead of writing docs/import.md")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    text = make_text(args.states)
    if not args.print:
        write_table(text, block)
    print(text)
    return 0


def main(argv=None):
    return command(argv, __doc__.splitlines()[0], lambda states: table(survey(states), states), BLOCK)


if __name__ == "__main__":
    sys.exit(main())
