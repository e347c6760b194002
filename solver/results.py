"""Results of a run: time histories of bodies, joints, drivers, energies and diagnostics.

Saved as HDF5 (h5py) and exported as CSV.  A long run streams its rows into the file as it goes
(:class:`ResultsWriter`, ``simulate(..., results_path=...)``) and gets back a :class:`Results` that
reads lazily from that file (``load_results(path, lazy=True)``), so memory stays bounded by one
chunk of rows whatever the number of output points.

Conventions (the public contract): SI units, global axes; ``joint_reaction`` is the force and
torque acting ON body_j FROM body_i at the joint origin (for a driven joint the actuator torque is
included); ``driver_force`` the generalized force the actuator applies to body_j along the driven
coordinate; ``coupler_force`` the generalized force a coupler applies along joint_j's coordinate
(−λ of its row, recorded in ``lam``).
"""
from __future__ import annotations

import csv
import io
import json
import os

import numpy as np

from .errors import ModelError
from .io.results_check import METHOD_CODES
from .model.fields import show_names

RESULTS_FORMAT = "mbs-studio-results"
RESULTS_VERSION = 1
ENERGY_KEYS = ("kinetic", "potential", "gravity", "spring", "strain", "total")
_ARRAYS = ("t", "q", "qd", "qdd", "lam", "r", "A", "v", "w", "a", "alpha", "reaction_force",
           "reaction_torque", "reaction_force_joint", "reaction_torque_joint", "driver_force",
           "energy_table", "constraint_violation", "conditioning", "step_t", "step_h", "method_code")
_STEP_ARRAYS = ("step_t", "step_h")          # one row per accepted integration step, not per output
COMPRESSION_LEVEL = 4         # gzip level of streamed files (ResultsWriter)
INCOMPLETE = "incomplete"      # status of a streamed file whose run has not finished (or was killed)
# Flexible bodies (only in runs that have them; meta["flexible_bodies"] lists name, modes, nodes
# in order): floating frames, modal coordinates and nodal displacements/stresses, concatenated.
FLEX_ARRAYS = ("flex_r", "flex_A", "flex_a", "flex_disp", "flex_stress")
STRESS_COMPONENTS = ("axial", "bending_y", "bending_z", "torsion")


class Results:
    """Time histories of one run (see module docstring).  Arrays are indexed [time, item, ...].

    ``arrays`` maps dataset names (``_ARRAYS``) to numpy arrays, or to the h5py datasets of an open
    results file (``source``: its h5py.File), read slice by slice on demand."""

    def __init__(self, arrays: dict, meta: dict, source=None):
        self._a = arrays
        self._source = source
        self.meta = meta
        self.body_names = list(meta["body_names"])
        self.joint_names = list(meta["joint_names"])
        self.driver_names = list(meta["driver_names"])
        self.events = list(meta.get("events", []))
        self.flexible_body_names = [f["name"] for f in meta.get("flexible_bodies", [])]
        self._contacts = {}          # (contact name, pair) → its re-evaluated (force, point, power, pairs)

    # ---- public API: contract -------------------------------------------------------------------
    @property
    def t(self):
        return self._full("t")

    def body_position(self, name):
        return self._a["r"][:, self._body(name)]

    def body_rotation(self, name):
        return self._a["A"][:, self._body(name)]

    def body_velocity(self, name):
        return self._a["v"][:, self._body(name)]

    def body_angular_velocity(self, name):
        return self._a["w"][:, self._body(name)]

    def body_acceleration(self, name):
        return self._a["a"][:, self._body(name)]

    def body_angular_acceleration(self, name):
        return self._a["alpha"][:, self._body(name)]

    def joint_reaction(self, name, frame="global"):
        """(force (N,3), torque (N,3)) on body_j from body_i at the joint origin; ``frame`` is
        'global' (global axes) or 'joint' (axes of the joint frame on body_i)."""
        k = self._index(self.joint_names, name, "joint")
        if frame == "global":
            return self._a["reaction_force"][:, k], self._a["reaction_torque"][:, k]
        if frame == "joint":
            return self._a["reaction_force_joint"][:, k], self._a["reaction_torque_joint"][:, k]
        raise ModelError(f"frame: must be 'global' or 'joint'; got {frame!r}")

    def driver_force(self, name):
        return self._a["driver_force"][:, self._index(self.driver_names, name, "driver")]

    def coupler_force(self, name):
        """(N,) generalized force coupler ``name`` applies along joint_j's coordinate (N·m about a
        revolute's axis: a gear's tooth torque on joint_j's body; N along a prismatic: a rack's
        force): −λ of the coupler's row.  Along joint_i's coordinate it applies −p'(θ_i) times it."""
        k = self._index(list(self.meta.get("coupler_names", [])), name, "coupler")
        lam = self._a["lam"]
        return -np.asarray(lam[:, int(self.meta["coupler_rows"][k])])

    @property
    def contact_names(self):
        """The contact elements whose forces the results can re-evaluate (``meta.contacts``)."""
        return [c.get("name") for c in self.meta.get("contacts", []) if isinstance(c, dict) and "bodies" not in c]

    @property
    def contact_group_names(self):
        """The contact groups whose forces the results can re-evaluate (``meta.contacts``)."""
        return [c.get("name") for c in self.meta.get("contacts", []) if isinstance(c, dict) and "bodies" in c]

    def contact_force(self, name, pair=None, member=None):
        """(N,3) force on body_j from body_i of contact element ``name``, global axes (the sum over
        its contact points); zero while apart.  Re-evaluated from the recorded body states with the
        run's contact law, which is stateless (:func:`solver.contact.element.contact_history`).
        A contact group: (N, m, 3) the total force on each of its m bodies from the others (in the
        order of its ``bodies``); with ``pair`` = (a, b), two of them, a listed before b, (N,3) the
        force on b from a; with ``member``, one of them, (N,3) the total force on it (its column of
        the (N, m, 3): the output ``forces.NAME.contact_force.MEMBER.x|y|z``)."""
        if member is None:
            return self._contact(name, pair)[0]
        force, _, _, table = self._contact(name)
        if pair is not None or force.ndim != 3:
            raise ModelError(f"member: contact '{name}' is a contact element; its force is contact_force(name)"
                             if force.ndim != 3 else "member: give pair=(a, b) or member, not both")
        if member not in table.bodies:
            raise ModelError(f"member: {member!r} is not a body of contact group '{name}' "
                             f"(bodies: {show_names(table.bodies)})")
        return force[:, table.bodies.index(member)]

    def contact_point(self, name, pair=None):
        """(N,3) point where contact element ``name``'s force acts: its contact points' mean weighted
        by their normal forces, global; NaN while apart (a contact group: of its ``pair``)."""
        point = self._contact(name, pair)[1]
        if point is None:
            raise ModelError(f"pair: contact group '{name}' acts at many points; name a pair of its bodies "
                             "(contact_point(name, pair=(a, b)))")
        return point

    def contact_dissipation(self, name, pair=None):
        """(N,) power dissipated by contact element ``name`` (W; damping, friction, and the elastic
        energy lost while the force is clipped at 0: :mod:`solver.contact.element`); its time
        integral is the energy the contact took out of ``energy["total"]`` (a contact group: all its
        pairs, or its ``pair``)."""
        return self._contact(name, pair)[2]

    def contact_pairs(self, name):
        """The touching pairs of contact group ``name`` (or contact element) at every output point,
        one row per output point and pair (:class:`solver.contact.group.ContactPairs`: ``index``, the
        members ``a`` < ``b`` of ``bodies``, the pair's ``point`` and its ``force`` on b from a, as
        ``contact_point`` / ``contact_force`` give them for ``pair=(a, b)``, and ``power``).  From
        the same evaluation as ``contact_force(name)``; what the GUI draws, one arrow per row."""
        return self._contact(name)[3]

    @property
    def energy(self):
        e = self._full("energy_table")
        return {k: e[:, i] for i, k in enumerate(ENERGY_KEYS)}

    @property
    def constraint_violation(self):
        return self._full("constraint_violation")

    # ---- public API: flexible bodies ------------------------------------------------------------
    def modal_coordinates(self, name):
        """Modal coordinates a (N, k) of a flexible body (mass-normalized free–free modes)."""
        f = self._flexible(name)
        return self._a["flex_a"][:, f["a0"]:f["a0"] + f["modes"]]

    def node_displacement(self, name, node):
        """Elastic displacement Φ_node a (N, 3) of a node, in the body's floating frame."""
        return self._a["flex_disp"][:, self._node(name, node)]

    def node_stress(self, name, node):
        """Stress at a node (N, 4), Pa: axial, bending about y (+z fibre), bending about z (+y
        fibre), torsional shear (``STRESS_COMPONENTS``)."""
        return self._a["flex_stress"][:, self._node(name, node)]

    def flexible_frame(self, name):
        """(position (N,3), rotation (N,3,3)) of a flexible body's floating frame (origin at the
        undeformed midpoint, x along the beam), global."""
        k = self._flexible(name)["index"]
        return self._a["flex_r"][:, k], self._a["flex_A"][:, k]

    # ---- public API: more -----------------------------------------------------------------------
    @property
    def coordinates(self):
        """Generalized coordinates q (N, nq), velocities q̇ and accelerations q̈, multipliers λ."""
        return self._full("q")

    @property
    def velocities(self):
        return self._full("qd")

    @property
    def accelerations(self):
        return self._full("qdd")

    @property
    def multipliers(self):
        return self._full("lam")

    @property
    def conditioning(self):
        """σ_min/σ_max of the independent constraint rows at each output: falls towards 0 as the
        mechanism nears a singular configuration (a warning before it gets there)."""
        return self._full("conditioning")

    @property
    def partition_method(self):
        """Active partitioning method at each output ('lu', 'qr', 'svd' or 'kinematic')."""
        return [METHOD_CODES[int(c)] for c in self._full("method_code")]

    @property
    def step_sizes(self):
        """(t, h) of every accepted integration step."""
        return self._full("step_t"), self._full("step_h")

    @property
    def redundant_equations(self):
        """Descriptions of redundant constraint equations (handled by minimum-norm multipliers)."""
        return list(self.meta.get("redundant", []))

    @property
    def nonunique_reactions(self):
        """Joints whose reactions are not uniquely determined (redundant constraints: shown as the
        minimum-norm solution, one of infinitely many)."""
        return list(self.meta.get("nonunique_reactions", []))

    @property
    def nonunique_components(self):
        """{joint or driver name: its non-unique components} ("force x" … "moment z" in the joint
        frame, "driver force"; :mod:`solver.partitioning.self_stress`)."""
        return self.nonunique_components_in("joint")

    def nonunique_components_in(self, frame="joint"):
        """:attr:`nonunique_components` with the joints' components in ``frame``, 'joint' or
        'global' axes.  Results written before components were told apart list every component
        of each joint of ``nonunique_reactions``."""
        key = {"joint": "nonunique_components", "global": "nonunique_components_global"}.get(frame)
        if key is None:
            raise ModelError(f"frame: must be 'global' or 'joint'; got {frame!r}")
        if key in self.meta:
            return {k: list(v) for k, v in self.meta[key].items()}
        from .partitioning.self_stress import JOINT_COMPONENTS
        return {j: list(JOINT_COMPONENTS) for j in self.nonunique_reactions}

    @property
    def nonunique_messages(self):
        """{name: sentence} for the elements of ``nonunique_components``, e.g. "out-of-plane force z
        and out-of-plane moment x, y of crank_pin are not unique"."""
        return dict(self.meta.get("nonunique_messages", {}))

    @property
    def status(self):
        return self.meta.get("status", "ok")

    @property
    def path(self):
        """The results file this object reads from (a streamed run, ``load_results(lazy=True)``),
        else None."""
        return self._source.filename if self._source is not None else None

    def __len__(self):
        return len(self._a["t"])

    def summary(self) -> dict:
        e = self.energy["total"]
        scale = max(np.max(np.abs(self.energy["kinetic"])) if len(e) else 0.0, np.max(np.abs(e)) if len(e) else 0.0, 1e-300)
        return {
            "model": self.meta.get("model_name"), "status": self.status,
            "outputs": len(self.t), "t_end": float(self.t[-1]) if len(self.t) else 0.0,
            "steps": int(self.meta.get("steps", 0)), "rhs_evaluations": int(self.meta.get("rhs_evaluations", 0)),
            "wall_time_s": float(self.meta.get("wall_time", 0.0)),
            "real_time_factor": (float(self.t[-1]) / self.meta["wall_time"]
                                 if len(self.t) and self.meta.get("wall_time") else float("nan")),
            "max_constraint_violation": float(np.max(self.constraint_violation)) if len(self.t) else 0.0,
            "energy_drift": float(np.max(np.abs(e - e[0])) / scale) if len(e) else 0.0,
            "formulation": self.meta.get("formulation"), "partitioning": self.meta.get("partitioning"),
            "integrator": self.meta.get("integrator"), "message": self.meta.get("message", ""),
        }

    # ---- files ----------------------------------------------------------------------------------
    def save(self, path):
        """Write an HDF5 file atomically (temporary file + rename).  Results read from a file are
        copied byte for byte (nothing to do when ``path`` is that file)."""
        import h5py
        from .io.files import atomic_copy, atomic_write
        if self.path is not None:
            if not (os.path.exists(path) and os.path.samefile(path, self.path)):
                atomic_copy(self.path, os.fspath(path))
            return
        buf = io.BytesIO()
        with h5py.File(buf, "w") as f:
            f.attrs["format"] = RESULTS_FORMAT
            f.attrs["version"] = RESULTS_VERSION
            f.attrs["meta"] = json.dumps(self.meta)
            for k in _ARRAYS + tuple(k for k in FLEX_ARRAYS if k in self._a):
                f.create_dataset(k, data=self._a[k], compression="gzip" if self._a[k].size > 4096 else None)
        atomic_write(os.fspath(path), buf.getvalue(), keep_backup=False)

    def to_csv(self, folder):
        """One CSV per body (position, velocity, …), per joint (reactions), per contact (a contact
        element's force on body_j, a contact group's total force on each member: ``contact_force``
        re-evaluated), plus energy and drivers; each column header ends with its SI unit in brackets
        ("r_x [m]"; a driver's generalized force is in N or N·m, as its coordinate is a translation or
        a rotation); each file written atomically (a link or special file at a CSV's name is refused,
        ModelError)."""
        from .io.files import atomic_write
        os.makedirs(folder, exist_ok=True)
        t = self.t
        written = []

        def write(name, header, columns):
            path = os.path.join(folder, name)
            text = io.StringIO(newline="")
            w = csv.writer(text)
            w.writerow(header)
            for row in np.column_stack(columns):
                w.writerow([repr(float(x)) for x in row])
            atomic_write(path, text.getvalue().encode(), keep_backup=False)   # never through a link
            written.append(path)
        xyz = ("x", "y", "z")
        for b in self.body_names:
            cols = [t]
            header = ["t [s]"]
            for label, arr, unit in (("r", self.body_position(b), "m"), ("v", self.body_velocity(b), "m/s"),
                                     ("w", self.body_angular_velocity(b), "rad/s"),
                                     ("a", self.body_acceleration(b), "m/s²")):
                cols.append(arr)
                header += [f"{label}_{c} [{unit}]" for c in xyz]
            write(f"body_{b}.csv", header, cols)
        for j in self.joint_names:
            F, T = self.joint_reaction(j)
            Fj, Tj = self.joint_reaction(j, "joint")
            write(f"joint_{j}.csv", ["t [s]"] + [f"{p}_{c} [{'N' if p[0] == 'F' else 'N·m'}]"
                                                 for p in ("F", "T", "F_joint", "T_joint") for c in xyz],
                  [t, F, T, Fj, Tj])
        for c in self.contact_names:
            write(f"contact_{c}.csv", ["t [s]"] + [f"F_{a} [N]" for a in xyz], [t, self.contact_force(c)])
        for g in self.contact_group_names:
            members = self.contact_pairs(g).bodies
            write(f"contact_{g}.csv", ["t [s]"] + [f"{m} F_{a} [N]" for m in members for a in xyz],
                  [t, np.reshape(self.contact_force(g), (len(t), -1))])
        write("energy.csv", ["t [s]"] + [f"{k} [J]" for k in ENERGY_KEYS], [t, self._full("energy_table")])
        if self.driver_names:
            write("drivers.csv", ["t [s]"] + [f"{d} [N or N·m]" for d in self.driver_names],
                  [t, self._full("driver_force")])
        return written

    # ---- helpers --------------------------------------------------------------------------------
    def _full(self, key):
        """The whole array (read from the file when lazy)."""
        return self._a[key][()]

    def _flexible(self, name):
        """Layout entry of a flexible body with its offsets (index, a0 modal column, n0 first node)."""
        k = self._index(self.flexible_body_names, name, "flexible body")
        layout = self.meta["flexible_bodies"]
        return dict(layout[k], index=k, a0=sum(f["modes"] for f in layout[:k]),
                    n0=sum(f["nodes"] for f in layout[:k]))

    def _node(self, name, node):
        f = self._flexible(name)
        if not 0 <= node < f["nodes"]:
            raise ModelError(f"node: flexible body '{name}' has nodes 0..{f['nodes'] - 1}; got {node}")
        return f["n0"] + node

    def _contact(self, name, pair=None):
        key = (name, None if pair is None else tuple(pair))
        if key not in self._contacts:
            self._contacts[key] = self._evaluate_contact(name, pair)
        return self._contacts[key]

    def _evaluate_contact(self, name, pair):
        from .contact.element import contact_history
        from .contact.group import member_pair
        from .forces import BodyFrames
        specs = {c.get("name"): c for c in self.meta.get("contacts", []) if isinstance(c, dict)}
        if name not in specs:
            raise ModelError(f"no contact named '{name}' in the results (contacts: {show_names(specs)})")
        names = self.body_names
        r, A, v, w = (np.asarray(self._full(key)) for key in ("r", "A", "v", "w"))
        if pair is not None and "bodies" not in specs[name]:
            raise ModelError(f"pair: contact '{name}' is a contact element, not a group; its force is "
                             "contact_force(name)")
        if pair is not None:
            member_pair(specs[name], pair)             # a ModelError naming the pair, not a damaged file
        try:
            return contact_history(specs[name], {b: k for k, b in enumerate(names)}, BodyFrames(r, A, v, w), len(r),
                                   pair)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ModelError(f"meta.contacts: contact '{name}' is damaged ({type(exc).__name__}: {exc})") from None

    def _body(self, name):
        return self._index(self.body_names, name, "body")

    @staticmethod
    def _index(names, name, kind):
        try:
            return names.index(name)
        except ValueError:
            raise ModelError(f"no {kind} named '{name}' in the results ({kind}s: {show_names(names)})") from None


def load_results(path, lazy=False) -> Results:
    """Read a results file written by :meth:`Results.save` or :class:`ResultsWriter`; raises
    ModelError if it is not one, or holds links, external storage or datasets of another dtype or
    shape than its meta implies (:mod:`solver.io.results_check`).  ``lazy=True`` keeps the file open and reads each array, or the
    slice of it that an accessor needs, only when asked (results larger than memory)."""
    import h5py
    from .io.files import open_regular
    from .io.results_check import check_datasets, read_meta
    path = os.fspath(path)
    with open_regular(path, float("inf"), "results file"):
        pass                                  # a regular file (a FIFO or device is never opened by HDF5)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ModelError(f"{path}: cannot read results ({exc})") from None
    try:
        if f.attrs.get("format") != RESULTS_FORMAT:
            raise ModelError(f"{path}: not an MBS Studio results file")
        version = f.attrs.get("version", 0)
        if isinstance(version, (bool, np.bool_)) or not isinstance(version, (int, np.integer)):
            raise ModelError(f"{path}: version: must be an integer; got {version!r:.40}")
        if version > RESULTS_VERSION:
            raise ModelError(f"{path}: results version {version} is newer than this program reads")
        meta = read_meta(f, path)
        keys = _ARRAYS + (FLEX_ARRAYS if meta.get("flexible_bodies") else ())
        check_datasets(f, path, meta, keys, _STEP_ARRAYS, lazy)
        arrays = {k: f[k] if lazy else f[k][()] for k in keys}
    except (KeyError, TypeError, ValueError, OSError) as exc:
        f.close()
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"{path}: damaged results file ({type(exc).__name__}: {exc})") from None
    except BaseException:
        f.close()
        raise
    if lazy:
        return Results(arrays, meta, source=f)
    f.close()
    return Results(arrays, meta)


class ResultsWriter:
    """Writes a results file while a run goes on, in the layout of :meth:`Results.save`.

    Each array is a resizable dataset chunked along time (``chunk_rows`` rows per HDF5 chunk,
    gzip level ``COMPRESSION_LEVEL``) that :meth:`append` grows by a block of rows; the file is
    flushed after every append, so the rows written so far stay readable even if the process is
    killed (that file has status ``"incomplete"``).  The file is written under a temporary name
    beside ``path`` (``<name>.<random>.part``, :func:`solver.io.files.create_temp`) and
    :meth:`close` renames it onto ``path``: an earlier file at ``path`` is only ever replaced by a
    finished one, keeping its mode, and a ``path`` that is a link, device or folder is refused."""

    def __init__(self, path, columns: dict, meta: dict):
        """columns: {dataset name: (item shape, dtype, chunk rows)}; meta: as in :meth:`append`."""
        import h5py
        from .io.files import create_temp
        self.path = os.fspath(path)
        try:
            fd, self.tmp, self._old = create_temp(self.path, part=True)
        except ModelError as exc:
            raise ModelError(f"results_path: {exc}") from None
        os.close(fd)
        try:
            self._f = h5py.File(self.tmp, "w")
            self._f.attrs["format"] = RESULTS_FORMAT
            self._f.attrs["version"] = RESULTS_VERSION
            for name, (shape, dtype, rows) in columns.items():
                shape = tuple(shape)
                self._f.create_dataset(name, shape=(0,) + shape, maxshape=(None,) + shape, dtype=dtype,
                                       chunks=(rows,) + shape if all(shape) else True,  # h5py's guess for empty items
                                       compression="gzip", compression_opts=COMPRESSION_LEVEL)
            self.append({}, meta)
        except BaseException:
            if getattr(self, "_f", None) is not None:
                self._f.close()
            os.unlink(self.tmp)
            raise

    def append(self, blocks: dict, meta: dict):
        """Append ``blocks`` ({dataset name: array of rows}), store ``meta`` (its status should be
        ``INCOMPLETE``) and flush the file."""
        for name, block in blocks.items():
            ds = self._f[name]
            n = ds.shape[0]
            ds.resize(n + len(block), axis=0)
            ds[n:] = block
        self._f.attrs["meta"] = json.dumps(meta)
        self._f.flush()

    def close(self, meta: dict) -> str:
        """Store the final ``meta``, close the file and rename it onto ``path``; returns ``path``."""
        from .io.files import replace
        self._f.attrs["meta"] = json.dumps(meta)
        self._f.close()
        fd = os.open(self.tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        replace(self.tmp, self.path, self._old, keep_backup=False)
        return self.path

    def discard(self):
        """Close and delete the temporary file (``path`` is left as it was)."""
        self._f.close()
        os.unlink(self.tmp)

