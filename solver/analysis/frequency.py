"""Dominant frequency of a sampled time response — the check Bae, Yang & Seo (2003) (§5.1, Figs. 4–5) makes
of a linearized frequency against the FFT of the nonlinear simulation.

The signal (uniformly sampled, mean removed) is multiplied by a Hann window w_k = sin²(π k / n)
and zero-padded to ``PAD`` times its length (the next power of two), so the spectrum is sampled
every Δf = 1 / (PAD · n · dt) instead of the raw resolution 1 / (n · dt).  The peak bin k of |X| is
refined by a parabola through the logarithms of the three bins around it (Gaussian interpolation):

    δ = ½ (a₋ − a₊) / (a₋ − 2 a₀ + a₊),   a = ln |X|,   f = (k + δ) Δf,

(the vertex of the parabola; exact for a Gaussian peak, and for a Hann-windowed sinusoid its error
is a small fraction of Δf — tests/solver/test_linearize.py checks this on known tones).  The raw
resolution 1 / (n · dt) is what the record length allows: two tones closer than that merge.
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelError

PAD = 16


def dominant_frequency(t, signal):
    """Frequency (Hz) of the largest spectral peak of ``signal`` sampled at the uniform times ``t``
    (seconds).  Raises ModelError when fewer than 8 samples are given, the times are not uniformly
    spaced (relative spread of the steps > 1e-6), or the signal is constant."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(signal, dtype=float)
    if t.ndim != 1 or x.shape != t.shape:
        raise ModelError(f"dominant_frequency: t and signal must be 1-D of the same length, got shapes "
                         f"{t.shape} and {x.shape}")
    n = len(t)
    if n < 8:
        raise ModelError(f"dominant_frequency: needs at least 8 samples, got {n}")
    steps = np.diff(t)
    dt = float(np.mean(steps))
    if dt <= 0 or np.max(np.abs(steps - dt)) > 1e-6 * dt:
        raise ModelError("dominant_frequency: t must be uniformly spaced and increasing")
    x = (x - np.mean(x)) * np.hanning(n)
    nfft = 1 << int(np.ceil(np.log2(PAD * n)))
    mag = np.abs(np.fft.rfft(x, nfft))
    if not np.any(mag > 0):
        raise ModelError("dominant_frequency: the signal is constant")
    k = int(np.argmax(mag[1:-1])) + 1
    a_m, a_0, a_p = np.log(np.maximum(mag[k - 1:k + 2], 1e-300))
    denom = a_m - 2 * a_0 + a_p
    delta = 0.5 * (a_m - a_p) / denom if denom < 0 else 0.0
    return (k + delta) / (nfft * dt)
