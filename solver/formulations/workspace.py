"""A run's own copy of a compiled system: the split of MuJoCo's mjModel / mjData (Pinocchio's Model /
Data) in the form that fits the systems here.

A compiled system (:class:`~solver.formulations.system.MechanicalSystem`) is an object graph: index
arrays, topology, equation tables, time functions, the loaded C library — all fixed once compiled —
and a few objects that an evaluation changes, its *run state* (:meth:`MechanicalSystem.run_state`):
joints that unwrap their angle, force elements with a state, caches of the last evaluation, the
generated kernels' argument buffers.  :func:`workspace` copies exactly the run state and every
object of the graph that refers to it (so each reference in the copy points at the copy: the lists
of joints, the rows holding a joint, the batched evaluator holding its joints …), shares everything
else, and resets the copied run state (``reset()``, where an object has it: a new run starts at
the model's configuration).  Runs on different workspaces of one system then never see each
other's state — two threads may run one :class:`~solver.compile.CompiledModel` at once.

The object graph followed: the built-in containers (list, tuple, dict, set) and instances of the
solver's own classes (``__dict__`` and ``__slots__``); other objects (numpy arrays, ctypes
libraries, sympy, scipy) are shared as they are.  Copies are made with :func:`copy.deepcopy`, so
a class with resources of its own defines ``__deepcopy__`` (:class:`solver.codegen.build.Buffers`:
new buffers bound to the same library); an object of the run state that refers to no other copied
object (a joint's unwrapping memory, a cache) is copied by :func:`copy.copy` instead, which is the
same copy (:class:`_Plan`).  The walk that finds what to copy runs once per compiled system: its
cost is a first run's (≈ 0.05 s for the ≈ 49,000 objects of the four-bar row at N = 400).
"""
from __future__ import annotations

import copy
import threading
import weakref

import numpy as np

from ..math.collector import collection_paused

_CONTAINERS = (list, tuple, dict, set, frozenset)
_PLANS = weakref.WeakKeyDictionary()      # system → its _Plan (what its workspaces copy and share)
_FOLLOWED = {}                            # class → whether the graph walk follows its instances
_STARTS = weakref.WeakKeyDictionary()     # system → its initial_state() (q0, q̇0, t0), arrays read-only
_CLAIMS = weakref.WeakKeyDictionary()     # system → the lock of the run evaluating it itself
_CLAIMS_LOCK = threading.Lock()
_IDLE = weakref.WeakKeyDictionary()       # system → [(workspace, its cache)] given back by finished runs
IDLE_KEPT = 2                             # idle workspaces kept per system (runs one after the other need one)


def workspace(system, run_state):
    """A copy of ``system`` owning fresh copies of the objects in ``run_state`` (all reachable from
    ``system``) and of everything that leads to them; the rest is shared (module docstring).  What
    is copied and how is found once per system (:class:`_Plan`: a compiled system's structure does
    not change) and again when its run state is other objects than before."""
    state = [id(obj) for obj in run_state]
    with collection_paused():   # the walk's and the copy's many allocations: no full collections
        plan = _PLANS.get(system)
        if plan is None or plan.state != state:
            plan = _PLANS[system] = _Plan(system, run_state, state)
        memo = dict(plan.shared)
        for obj in plan.shallow:
            memo[id(obj)] = copy.copy(obj)
        twin = copy.deepcopy(system, memo)
    reset(memo[key] for key in state)
    return twin


def borrow(system, run_state):
    """(workspace, cache) for one run: an idle workspace of ``system`` a finished run gave back
    (:func:`give_back`) with its run state reset — what a fresh copy would be, since everything else
    in it is what the compile fixed and no evaluation changes — else a fresh :func:`workspace` and an
    empty cache.  ``cache``: a dict the run keeps objects bound to this workspace in (the compiled
    output's tables and buffers), reused with it.  The copy it saves is ≈ 0.2 ms of a 7-DOF arm's
    run (issue #32 item 1)."""
    with _CLAIMS_LOCK:
        idle = _IDLE.get(system)
        lent = idle.pop() if idle else None
    if lent is None:
        return workspace(system, run_state), {}
    space, cache = lent
    reset(space.run_state())
    return space, cache


def give_back(system, space, cache):
    """A finished run's workspace of ``system`` (from :func:`borrow`, evaluated by nothing else
    now) kept for the next run, at most IDLE_KEPT per system."""
    with _CLAIMS_LOCK:
        idle = _IDLE.setdefault(system, [])
        if len(idle) < IDLE_KEPT:
            idle.append((space, cache))


def initial_state(system, space):
    """``system.initial_state()`` — (q0, q̇0, t0) from the model's drawn positions and initial
    velocities, not yet assembled — evaluated once per compiled ``system`` on its workspace
    ``space`` and kept (read-only arrays): it reads only what the compile fixed (a model edit
    compiles a new system, so it never finds an old one's start), and it is a run's largest fixed
    cost on a recursive formulation (the tree's kinematics and each body's Jacobian)."""
    start = _STARTS.get(system)
    if start is None:
        q, qd, t = space.initial_state()
        q, qd = np.array(q, dtype=float), np.array(qd, dtype=float)
        q.flags.writeable = qd.flags.writeable = False
        start = _STARTS[system] = (q, qd, t)
    return start


def claim(system):
    """The lock of ``system`` acquired without waiting, or None when another run holds it
    (:meth:`~solver.formulations.system.MechanicalSystem.claim`).  Kept beside the system, not in
    it: a workspace copies the system's own attributes."""
    with _CLAIMS_LOCK:
        lock = _CLAIMS.get(system)
        if lock is None:
            lock = _CLAIMS[system] = threading.Lock()
    return lock if lock.acquire(blocking=False) else None


def reset(run_state):
    """Reset the objects of a run state that have ``reset()`` (the others hold no memory to clear):
    a new run starts at the model's configuration."""
    for obj in run_state:
        if hasattr(obj, "reset"):
            obj.reset()


class _Plan:
    """How a system's workspaces are made: the objects to copy (``owned``: the run state and every
    object from which it can be reached, the system included), the owned objects that refer to no
    owned object (``shallow``: a run state's joints, caches; copied by :func:`copy.copy`, which gives
    what :func:`copy.deepcopy` gives with their references shared — unless their class copies itself,
    ``__copy__``/``__deepcopy__``), and the memo of :func:`copy.deepcopy` that shares everything else
    (``shared``: the objects the other owned objects refer to directly; deepcopy reaches no others).
    The followed graph is walked once; a shared object is neither visited by the copy nor put in
    every workspace's memo (the four-bar row at N = 1,000: 124,266 objects reached, 3,003 owned)."""

    def __init__(self, system, run_state, state):
        self.state = state
        edges = _graph(system)
        missing = [type(obj).__name__ for obj in run_state if id(obj) not in edges]
        if missing:
            raise RuntimeError(f"workspace: run state not reachable from the system: {', '.join(missing)}")
        owned = _leading_to([*state, id(system)], edges)
        self.shallow, self.shared = [], {}
        for key in owned:
            obj = edges[key][0]
            refs = _references(obj)
            if obj is not system and not any(id(r) in owned for r in refs) and _plain_copy(obj):
                self.shallow.append(obj)
            else:
                self.shared.update((id(r), r) for r in refs if id(r) not in owned)


def _plain_copy(obj) -> bool:
    """Whether :func:`copy.copy` of ``obj`` is its :func:`copy.deepcopy` with every reference shared:
    the built-in containers and classes that do not define how they are copied."""
    cls = type(obj)
    return isinstance(obj, _CONTAINERS) or not (hasattr(cls, "__deepcopy__") or hasattr(cls, "__copy__"))


def _followed(obj) -> bool:
    """Whether the walk follows ``obj``: a built-in container or an instance of the solver's own classes."""
    cls = type(obj)
    known = _FOLLOWED.get(cls)
    if known is None:
        known = _FOLLOWED[cls] = issubclass(cls, _CONTAINERS) or cls.__module__.partition(".")[0] == "solver"
    return known


def _references(obj) -> list:
    """The objects ``obj`` refers to directly (what :func:`copy.deepcopy` copies of it)."""
    if isinstance(obj, dict):
        out = [*obj.keys(), *obj.values()]
    elif isinstance(obj, _CONTAINERS):
        out = list(obj)
    else:
        out = []
    if type(obj).__module__.partition(".")[0] != "solver":
        return out
    out += getattr(obj, "__dict__", {}).values()
    for cls in type(obj).__mro__:
        slots = getattr(cls, "__slots__", ())
        out += [getattr(obj, name) for name in ((slots,) if isinstance(slots, str) else slots)
                if hasattr(obj, name)]
    return out


def _graph(root) -> dict:
    """{id: (object, ids of the followed objects it refers to)} of every followed object reachable
    from ``root`` (the built-in containers and the solver's own classes, :func:`_followed`; what they
    refer to otherwise — arrays, numbers, libraries — is a leaf, shared)."""
    edges, stack, known = {id(root): None}, [root], _FOLLOWED
    while stack:
        obj = stack.pop()
        inner = []
        for r in _references(obj):
            follow = known.get(type(r))
            if follow is None:
                follow = _followed(r)
            if follow:
                key = id(r)
                inner.append(key)
                if key not in edges:
                    edges[key] = None
                    stack.append(r)
        edges[id(obj)] = (obj, inner)
    return edges


def _leading_to(targets, edges) -> set:
    """The ids of ``targets`` and of every followed object (``edges``: :func:`_graph`) from which
    one of them can be reached."""
    referrers = {}
    for source, (_, inner) in edges.items():
        for key in inner:
            referrers.setdefault(key, []).append(source)
    owned, stack = set(), list(targets)
    while stack:
        key = stack.pop()
        if key not in owned:
            owned.add(key)
            stack.extend(referrers.get(key, ()))
    return owned
