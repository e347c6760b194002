"""Regenerate the MJCF coverage table of docs/import.md: every ``.xml`` file of the installed
dm_control and gymnasium packages (tools/mjcf_corpus.py) loaded by MuJoCo and imported with its
geoms as meshes; mass matrices and generalized forces compared at random states; our refusals
counted by reason beside MuJoCo's verdict on the file.

    python tools/mjcf_coverage.py [--states N] [--print]

Writes the table between the ``mjcf-coverage`` markers of docs/import.md (``--print``: prints it
instead).  Takes about a minute.
"""
from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools import mjcf_corpus, urdf_coverage  # noqa: E402

BLOCK = "mjcf-coverage"          # docs/import.md's block (tools/doc_blocks.py markers)
REASONS = [   # (pattern of our message, reason)
    (r"must be a path inside the folder", "a file outside the model's folder"),
    (r"not well-formed XML", "malformed XML"),
    (r"MuJoCo cannot (read|compile)", "MuJoCo refuses it"),
    (r"cannot read the .* file", "a file it names is missing"),
    (r"not satisfied at qpos0", "an equality not satisfied at qpos0"),
    (r"inertia", "inertia not valid for a body"),
]
NOTE = ("Mass matrices M and generalized forces Q (gravity, velocity terms, joint damping and stiffness) at "
        "{states} random states per file that has a degree of freedom and no closed loop (hinge and slide "
        "positions qpos0 ± U(1), ball and free orientations uniform, velocities standard normal; ball and free "
        "coordinates mapped through J and J̇v, tools/mjcf_corpus.py), against MuJoCo's compiled model without what "
        "the import notes and does not model (ball/free joint armature and damping, tendons, fluid forces; the friction "
        "loss, a constraint force in MuJoCo, left out of both); Q relative "
        "to the larger of MuJoCo's largest |Q| and g times its largest |M|.  MuJoCo loads a file by its own loader; "
        "many of dm_control's files are fragments (materials, skyboxes, assets) that load as models without a "
        "degree of freedom.")


def reason(message):
    for pattern, text in REASONS:
        if re.search(pattern, message):
            return text
    return message[:80]


def survey(states):
    return [(corpus, mjcf_corpus.check(corpus, path, states=states, visuals=True))
            for corpus in mjcf_corpus.corpora() for path in mjcf_corpus.files(corpus)]


def main(argv=None):
    return urdf_coverage.command(
        argv, __doc__.splitlines()[0],
        lambda states: urdf_coverage.table(survey(states), states, roots=mjcf_corpus.corpora(), why=reason, note=NOTE,
                                           odd_heading="Refused here although MuJoCo loads the file:"),
        BLOCK)


if __name__ == "__main__":
    sys.exit(main())
