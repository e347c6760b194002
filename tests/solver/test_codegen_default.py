"""The compile step (solver.compile) and generated kernels by default: ``codegen="auto"`` builds
them when a compiler is found (one notice says which path runs), a build is a visible and cancellable
phase, a CompiledModel runs again without compiling, parameter edits reuse the cached build, and
one-shot analyses accept a CompiledModel.  Here "auto" really builds: ``MBS_CODEGEN`` is removed."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import solver
from solver.cli import main
from solver.codegen.build import MODEL_LIBRARIES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.fixture(autouse=True)
def auto_builds(tmp_path, monkeypatch):
    monkeypatch.delenv("MBS_CODEGEN", raising=False)
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def slider_crank():
    return solver.load_model(str(SAMPLES / "slider_crank.mbs.json"))


@pytest.mark.slow
def test_auto_compiles_by_default_and_equals_the_generic_path():
    model = slider_crank()
    events = []
    compiled = solver.compile_model(model, on_event=events.append)
    assert model.settings.codegen == "auto" and compiled.generated
    assert [e["message"] for e in events] == ["compiling the model…"]
    assert len(compiled.notices) == 1 and compiled.notices[0].startswith("codegen: compiled kernels generated")
    with pytest.raises(dataclasses.FrozenInstanceError):
        compiled.system = None
    fast = solver.simulate(compiled, t_end=0.5)
    generic = solver.simulate(model, t_end=0.5, codegen=False)
    assert [e["kind"] for e in generic.events].count("codegen") == 0
    for body in generic.body_names:
        scale = np.abs(generic.body_position(body)).max()
        assert np.abs(fast.body_position(body) - generic.body_position(body)).max() <= 1e-7 * scale
    for joint in model.joints:
        reference = generic.joint_reaction(joint)[0]
        assert np.abs(fast.joint_reaction(joint)[0] - reference).max() <= 1e-5 * np.abs(reference).max()


@pytest.mark.slow
def test_a_compiled_model_runs_again_without_compiling_and_keeps_its_structure():
    compiled = solver.compile_model(slider_crank())
    events = []
    res = solver.simulate(compiled, t_end=0.1, rtol=1e-8, on_event=events.append)
    assert res.t[-1] == pytest.approx(0.1)
    assert "compiling the model…" not in [e["message"] for e in events]
    assert compiled.settings.formulation == "cartesian"          # the sample's (auto would be relative)
    with pytest.raises(solver.ModelError, match="formulation was 'cartesian' when the model was compiled"):
        solver.simulate(compiled, formulation="relative")
    with pytest.raises(solver.ModelError, match="hold needs the Model"):
        solver.simulate(compiled, hold=["x"])


@pytest.mark.slow
def test_parameter_edits_reuse_the_build(auto_builds):
    model = slider_crank()
    solver.compile_model(model)
    body = next(iter(model.bodies))
    model.set_field(body, "mass", 2.5 * model.bodies[body].mass)
    events = []
    again = solver.compile_model(model, on_event=events.append)
    assert events == [] and "loaded from the cache" in again.notices[0]
    assert len(list(auto_builds.glob(MODEL_LIBRARIES))) == 1


@pytest.mark.slow
def test_cancel_stops_a_build_and_leaves_no_library(auto_builds):
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 1          # let the build start, stop it at the next look

    with pytest.raises(solver.Cancelled):
        solver.simulate(solver.load_model(str(SAMPLES / "rrc_arm_case2.mbs.json")), t_end=0.1, cancel=cancel)
    assert not list(auto_builds.glob(MODEL_LIBRARIES))      # (the model-independent runtime may be built)


def test_on_means_required():
    with pytest.raises(solver.ModelError, match="settings.codegen: 'on' needs generated kernels.*conventional"):
        solver.compile_model(slider_crank(), codegen="on", constraints="parametric")
    off = solver.compile_model(slider_crank(), codegen="off")
    assert not off.generated and off.notices == ()


@pytest.mark.slow
def test_one_shot_analyses_accept_a_compiled_model():
    model = solver.load_model(str(SAMPLES / "pendulum.mbs.json"))
    compiled = solver.compile_model(model)
    assert compiled.generated
    from_model = solver.linearize(model).frequencies_hz
    np.testing.assert_allclose(solver.linearize(compiled).frequencies_hz, from_model, rtol=1e-6)
    eq = solver.static_equilibrium(compiled)
    assert eq.residual < 1e-8


@pytest.mark.slow
def test_cli_says_when_it_compiles(capsys):
    assert main(["run", str(SAMPLES / "pendulum.mbs.json"), "--t-end", "0.05"]) == 0
    out, err = capsys.readouterr()
    assert "mbs: compiling the model…" in err
    assert "codegen: compiled kernels generated" in out
    assert main(["run", str(SAMPLES / "pendulum.mbs.json"), "--t-end", "0.05", "--codegen", "off"]) == 0
    out, err = capsys.readouterr()
    assert "compiling" not in err and "codegen" not in out


@pytest.mark.slow
def test_a_failing_compiler_falls_back_with_its_message(monkeypatch, auto_builds):
    monkeypatch.setenv("CC", "false")                    # exits 1 on every unit
    compiled = solver.compile_model(slider_crank())
    assert not compiled.generated
    assert compiled.notices[0].startswith("codegen unavailable, generic path used: 'false -O")
    assert "failed (exit 1)" in compiled.notices[0]
    assert not list(auto_builds.glob("*.so"))


def test_generated_kernels_compile_as_parallel_units():
    """Long straight-line kernels are split over the compilers (build.JOBS) with lighter optimisation;
    the formulation's fixed code is a unit of its own (compiled while the kernels are derived: it
    declares the generated functions it calls itself), the model-independent C is in no unit."""
    from solver.codegen import build
    generated = "\n".join(f"void cg_k{k}(const double *q, double *out)\n{{\n" + "    out[0] = q[0];\n" * n + "}"
                          for k, n in enumerate((1500, 10, 700)))
    kernels = build._units(generated)
    assert len(kernels) == min(build.JOBS, 3)
    assert all(text.count("{") == text.count("}") for text, _ in kernels)
    assert sum(text.count("void cg_k") for text, _ in kernels) == 3
    longest = max(kernels, key=lambda u: len(u[0]))
    assert longest[1] == build.LONG_KERNEL_FLAGS
    [(fixed, flags)] = build._fixed_units("#define NB 3\n/* fixed */")
    assert flags == build.FIXED_FLAGS and fixed.endswith("#define NB 3\n/* fixed */")
    assert build._fixed_units("") == []                  # Cartesian: no fixed code
    assert not any("cg_reduced" in text for text, _ in kernels)
    for source in (build.RELATIVE_C, build.TREE_BODIES_C):     # every generated function it calls, declared
        text = source.read_text()
        called = set(re.findall(r"\b(cg[ct]_\w+)\(", text))
        assert called and all(re.search(rf"^void {name}\(", text, re.M) for name in called)


def test_a_generator_bug_never_stops_an_auto_run(monkeypatch):
    """"auto" falls back (one notice naming the error); "on" lets the error through."""
    from solver.codegen import derive

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(derive, "derive", broken)
    model = solver.load_model(str(SAMPLES / "pendulum.mbs.json"))
    res = solver.simulate(model, t_end=0.05)
    notes = [e["message"] for e in res.events if e["kind"] == "codegen"]
    assert res.status == "ok" and len(notes) == 1
    assert "internal error of the code generator (KeyError: 'a bug')" in notes[0]
    with pytest.raises(KeyError):
        solver.simulate(model, t_end=0.05, codegen="on")


@pytest.mark.slow
def test_the_time_functions_compile_in_the_visible_build(auto_builds):
    """With the compiled step loop (integrator "auto"), the drivers' time functions are compiled by the
    compile step, inside its announced, cancellable build — not at the first run.  A driver edit
    (kernels cached, time functions new) is announced again; a cancelled build leaves nothing."""
    model = solver.load_model(str(SAMPLES / "double_pendulum.mbs.json"))
    model.add_driver("swing", "shoulder", "0.5*sin(2*pi*t)")
    events = []
    compiled = solver.compile_model(model, integrator="auto", on_event=events.append)
    assert compiled.generated and [e["message"] for e in events] == ["compiling the model…"]
    assert len(list(auto_builds.glob("time-*.so"))) == 1
    run_events = []
    res = solver.simulate(compiled, t_end=0.2, on_event=run_events.append)
    assert "compiling the model…" not in [e["message"] for e in run_events]
    assert any(e["message"] == "step loop in C (Dormand–Prince 8(5,3))" for e in res.events)
    generic = solver.simulate(model, t_end=0.2, codegen=False, integrator="rk", rtol=1e-10, atol=1e-12)
    for body in generic.body_names:
        assert np.abs(res.body_position(body) - generic.body_position(body)).max() < 1e-6
    model.set_field("swing", "expression", "0.5*sin(3*pi*t)")
    events.clear()
    with pytest.raises(solver.Cancelled):
        solver.compile_model(model, integrator="auto", on_event=events.append, cancel=lambda: bool(events))
    assert len(list(auto_builds.glob("time-*.so"))) == 1
    solver.compile_model(model, integrator="auto", on_event=events.append)
    assert [e["message"] for e in events] == ["compiling the model…", "compiling the model…"]
    assert len(list(auto_builds.glob("time-*.so"))) == 2
