"""Strict JSON text for the files people exchange (project, study, results meta): a key given twice
in one object is an error naming the key (``json`` would silently keep the last value), nesting
deeper than ``MAX_DEPTH`` is refused before anything walks it recursively, and an integer too long
for Python to convert from text (``sys.get_int_max_str_digits``, 4300 digits) is read as the power
of ten of its magnitude, so the field that holds it reports it ("must be finite, got an integer too
large for a float") instead of the whole file failing without a field or line.
"""
from __future__ import annotations

import json

from ..errors import ModelError

MAX_DEPTH = 64          # far beyond any file this program writes (a project needs 6 levels)


class _Duplicate(ValueError):
    pass


def loads(text, source, parse_constant=None):
    """Parsed JSON of ``text``; ModelError starting with ``source`` for anything malformed."""
    try:
        data = json.loads(text, object_pairs_hook=_unique, parse_constant=parse_constant, parse_int=_integer)
    except _Duplicate as exc:
        raise ModelError(f"{source}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ModelError(f"{source}: JSON is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:              # e.g. an integer of more than 4300 digits
        text = str(exc)
        raise ModelError(f"{source}: {text if len(text) < 160 else text[:157] + '...'}") from None
    if depth(data) > MAX_DEPTH:
        raise ModelError(f"{source}: JSON is nested too deeply (more than {MAX_DEPTH} levels)")
    return data


def depth(data) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), computed without recursion."""
    deepest, stack = 0, [(data, 0)]
    while stack:
        value, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(value, dict):
            stack += [(v, d + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, d + 1) for v in value]
    return deepest


def _integer(text):
    """An integer token: its value, or for more digits than Python converts, ±10^(digits − 1)
    (made by arithmetic, which has no digit limit; the same size for every check of it)."""
    digits = text.lstrip("-")
    if len(digits) <= 4000:
        return int(text)
    return (-1 if text.startswith("-") else 1) * 10 ** (len(digits) - 1)


def _unique(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(f"duplicate key '{key if len(key) <= 60 else key[:57] + '...'}' in a JSON object "
                             "(each key may appear once)")
        out[key] = value
    return out
