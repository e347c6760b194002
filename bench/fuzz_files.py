"""Fuzz the project files of ``sample_models/`` through ``mbs validate`` and a short ``mbs run``.

Each case mutates one sample, structurally or semantically (a number to an extreme, NaN or a huge
integer, a string to odd unicode or a path, an array resized, a field dropped, duplicated or given
another type), writes it into a folder of its own and runs ``mbs validate`` and then
``mbs run --t-end T --codegen C --max-wall-time W --quiet`` on it (C: ``--codegen``, default off,
the generic path; "auto" or "on" builds generated kernels into a codegen cache of the fuzz's own,
shared by its cases; W: half the timeout, the run's own bound), each in a forked child process with
caps on its address space and CPU time (``resource.setrlimit``) and a wall-clock timeout.  Outcomes::

    ok            exit 0
    exit 2        refused as bad input
    exit 3        solver failure
    foreign       an exception the program did not expect ("internal error: …") or a traceback
    crash         killed by a signal (segfault, abort, the memory cap)
    hang          still running at the timeout (killed) after using at least half of it as CPU time,
                  or stopped by the CPU-time cap
    starved       still running at the timeout with less CPU time than that: the machine was busy
    write outside a file appeared outside the case's folder (in the fuzz root)

Usage (low priority: it keeps a core busy for a while)::

    nice python bench/fuzz_files.py [--cases 2000] [--seed 1] [--t-end 0.01] [--timeout 20]
                                    [--memory-mb 2048] [--show 5] [--codegen off|auto|on]

It prints a table of outcome counts per command and up to ``--show`` examples of every outcome
other than ok / exit 2 / exit 3.  The children are forks of this process (the solver is imported
once), so a case costs its own work, not an interpreter start.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")          # forked children: no BLAS thread pools
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import solver  # noqa: E402
from solver.cli import main  # noqa: E402

solver.preload()          # what runs import on first use, imported once here: the forked children share it

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sample_models")
NUMBERS = [0, -1, -1e308, 1e308, 1e-320, 2 ** 63, 10 ** 30, "NaN", "Infinity", "-Infinity", "HUGE_INT", 1e-300,
           1e9, 0.5]
STRINGS = ["", "\u202e", "\x1b[2J", "\x9b31m", "\x00", "a" * 5000, "../../outside", "/etc/passwd", "\U0001F600",
           "t" * 1999 + "+", "sin(" * 59 + "t" + ")" * 59, "exp(t)*" * 24 + "exp(t)", "1/0", "ground"]
OTHERS = [None, True, [], {}, [[]], {"a": 1}, "x"]
DUPLICATE = "\u0000duplicate\u0000"      # a key replaced by a copy of its sibling in the JSON text


# ---- mutations ----------------------------------------------------------------------------------------
def locations(node, path=()):
    """Every (path, value) in the JSON tree ``node`` (path: keys and indices from the root)."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from locations(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from locations(value, path + (i,))


def parent_of(root, path):
    node = root
    for key in path[:-1]:
        node = node[key]
    return node


def mutate(doc, rng):
    """(mutated document, description): one mutation at a random place of ``doc`` (changed in place)."""
    places = [(p, v) for p, v in locations(doc) if p]
    path, value = rng.choice(places)
    parent, key = parent_of(doc, path), path[-1]
    kind = rng.choice(["number", "string", "array", "drop", "duplicate", "type"])
    if isinstance(value, (int, float)) and not isinstance(value, bool) and kind in ("number", "string"):
        parent[key] = rng.choice(NUMBERS)
    elif isinstance(value, str) and kind in ("number", "string"):
        parent[key] = rng.choice(STRINGS)
    elif isinstance(value, list) and kind == "array":
        size = rng.choice([0, 1, 2, len(value) + 1, 1000, 100_000])
        parent[key] = (value * (size // max(1, len(value)) + 1))[:size] if value else [0.0] * size
    elif kind == "drop" and isinstance(parent, dict):
        del parent[key]
    elif kind == "duplicate" and isinstance(parent, dict):
        parent[DUPLICATE] = key
    else:
        parent[key] = rng.choice(OTHERS + NUMBERS + STRINGS)
        kind = "type"
    return doc, f"{kind} at {'.'.join(map(str, path))}"


def to_text(doc):
    """The JSON text of a mutated document: NaN/Infinity tokens, a 5000-digit integer and duplicated
    keys written as such."""
    text = json.dumps(doc, ensure_ascii=False)
    text = text.replace('"NaN"', "NaN").replace('"Infinity"', "Infinity").replace('"-Infinity"', "-Infinity")
    text = text.replace('"HUGE_INT"', "1" + "0" * 5000)
    while json.dumps(DUPLICATE) in text:       # "<dup>": "key" -> "key": <the same value again>
        start = text.index(json.dumps(DUPLICATE))
        colon = text.index(":", start + len(json.dumps(DUPLICATE)))
        key_text = json.JSONDecoder().raw_decode(text[colon + 1:].lstrip())[0]
        text = text[:start] + json.dumps(key_text) + ": 0" + text[text.index(json.dumps(key_text), colon) +
                                                              len(json.dumps(key_text)):]
    return text


# ---- running --------------------------------------------------------------------------------------------
def run_child(argv, folder, timeout, memory_mb):
    """Run ``main(argv)`` in a forked child inside ``folder``; (outcome, stderr text)."""
    err_path = os.path.join(folder, "stderr.txt")
    pid = os.fork()
    if pid == 0:                                                     # the child
        try:
            os.chdir(folder)
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CPU, (timeout, timeout + 1))
            fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            code = main(argv)
        except BaseException:                                        # noqa: BLE001 — reported as foreign
            import traceback
            traceback.print_exc()
            code = 99
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 98)
    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            cpu = usage.ru_utime + usage.ru_stime      # a busy shared machine starves a niced child
            return ("hang" if cpu >= timeout / 2 else "starved"), f"{cpu:.1f} s of CPU; " + _read(err_path)
        time.sleep(0.01)
    err = _read(err_path)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        return "hang", err                                           # the CPU-time cap
    if os.WIFSIGNALED(status):
        return f"crash (signal {os.WTERMSIG(status)})", err
    code = os.WEXITSTATUS(status)
    if "internal error" in err or "Traceback" in err or code not in (0, 2, 3):
        return "foreign", err
    return {0: "ok", 2: "exit 2", 3: "exit 3"}[code], err


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def outside(root, folder):
    """Names under the fuzz ``root`` other than the case's ``folder`` and what it holds (a case
    folder sits three levels down, so a path "../../x" from it still lands in the root)."""
    found = set()
    for d, dirs, files in os.walk(root):
        found.update(os.path.join(d, name) for name in files + dirs)
    return {p for p in found if p != folder and not p.startswith(folder + os.sep)}


def samples():
    return sorted(os.path.join(SAMPLES, name) for name in os.listdir(SAMPLES) if name.endswith(".mbs.json"))


def fuzz(cases, seed, t_end, timeout, memory_mb, show, codegen="off"):
    rng = random.Random(seed)
    sources = {path: json.load(open(path, encoding="utf-8")) for path in samples()}
    table = collections.defaultdict(collections.Counter)
    examples = collections.defaultdict(list)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mbs-fuzz-") as root, \
            tempfile.TemporaryDirectory(prefix="mbs-fuzz-cache-") as cache:
        os.environ["MBS_CODEGEN_CACHE"] = cache        # outside the watched root, inherited by the children
        for case in range(cases):
            source = rng.choice(sorted(sources))
            doc, what = mutate(json.loads(json.dumps(sources[source])), rng)
            folder = os.path.join(root, "cases", f"case{case:05d}", "project")
            os.makedirs(folder)
            path = os.path.join(folder, "m.mbs.json")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(to_text(doc))
            before = outside(root, folder)
            for command, argv in (("validate", ["validate", path]),
                                  ("run", ["run", path, "--t-end", str(t_end), "--codegen", codegen,
                                           "--max-wall-time", str(timeout / 2), "--quiet"])):
                outcome, err = run_child(argv, folder, timeout, memory_mb)
                if outside(root, folder) - before:
                    outcome = "write outside"
                table[command][outcome] += 1
                if outcome not in ("ok", "exit 2", "exit 3") and len(examples[outcome]) < show:   # starved: to re-run alone
                    last = err.strip().splitlines()[-1] if err.strip() else ""
                    examples[outcome].append(f"case {case}: {os.path.basename(source)}: {what}: {command}: "
                                             f"{last[:300]!r}")
            shutil.rmtree(os.path.join(root, "cases"))
            if (case + 1) % 100 == 0:
                print(f"{case + 1} cases, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return table, examples, time.perf_counter() - start


def print_table(table, examples, cases, wall, codegen="off"):
    outcomes = sorted({o for counts in table.values() for o in counts})
    print(f"{cases} cases over {len(samples())} samples, --codegen {codegen}, in {wall:.0f} s (load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(f"{'outcome':<22}" + "".join(f"{c:>10}" for c in table))
    for o in outcomes:
        print(f"{o:<22}" + "".join(f"{table[c][o]:>10}" for c in table))
    for o, lines in examples.items():
        print(f"\n{o}:")
        for line in lines:
            print(f"  {line}")


def main_cli(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--t-end", type=float, default=0.01)
    parser.add_argument("--timeout", type=int, default=20, help="seconds per command")
    parser.add_argument("--memory-mb", type=int, default=2048, help="address-space cap per command")
    parser.add_argument("--show", type=int, default=5, help="examples shown per unusual outcome")
    parser.add_argument("--codegen", choices=("off", "auto", "on"), default="off",
                        help="mbs run's --codegen: off (the generic path) or generated kernels")
    args = parser.parse_args(argv)
    table, examples, wall = fuzz(args.cases, args.seed, args.t_end, args.timeout, args.memory_mb, args.show,
                                 args.codegen)
    print_table(table, examples, args.cases, wall, args.codegen)


if __name__ == "__main__":
    main_cli()
