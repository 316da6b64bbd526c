"""The closed-loop lab's science: simulated powder XRD and reference-phase matching.

Patterns are simulated (Gaussian peaks from a phase model, Poisson-like
noise with fixed seeds) so the example needs no instrument and regenerates
byte for byte.  The analysis then really runs on those patterns: peak
finding and matching against the five reference phases decide every number
the lab's claims quote.  :data:`PHASE_X` is the simulation's ground truth
for the unknown phase; the analysis never sees it.
"""

from __future__ import annotations

import math
import random
from typing import Any

from example_bundles.make.common import csv_bytes

#: Peak tolerance in degrees 2-theta: a measured peak within TOL of a reference is explained.
TOL = 0.2
#: Reference phases: (2-theta in degrees, relative intensity) for Cu K-alpha.
REFERENCES: dict[str, list[tuple[float, int]]] = {
    "anatase TiO2": [(25.28, 100), (37.80, 20), (48.05, 35), (53.89, 20), (55.06, 20),
                     (62.69, 14), (75.03, 10)],
    "rutile TiO2": [(27.45, 100), (36.09, 50), (41.23, 22), (54.32, 60), (56.64, 20),
                    (69.01, 20)],
    "brookite TiO2": [(25.34, 100), (25.69, 80), (30.81, 90), (48.01, 30), (55.23, 30)],
    "T-Nb2O5": [(22.61, 100), (28.42, 80), (36.65, 30), (46.18, 25), (50.72, 25), (55.13, 20)],
    "H-Nb2O5": [(23.71, 60), (24.37, 100), (26.09, 50), (33.72, 40), (47.54, 30)],
}
#: The simulation's ground truth for the unknown phase; the analysis never sees it.
PHASE_X = [(24.86, 100), (29.90, 85), (34.75, 45), (44.12, 40), (51.63, 30), (60.48, 20)]


def true_phases(dopant_pct: int, anneal_c: int) -> dict[str, float]:
    """Phase fractions of a sample: X forms only at 550 C above 3 % Nb; rutile above 540 C."""
    x = max(0.0, min(0.85, (dopant_pct - 3.0) * 0.18)) if anneal_c == 550 else 0.0
    rutile = min(1.0, max(0.0, (anneal_c - 540) / 120))
    return {"anatase TiO2": (1 - x) * (1 - rutile), "rutile TiO2": (1 - x) * rutile, "X": x}


def pattern(seed: int, phases: dict[str, float]) -> list[tuple[float, int]]:
    """Cu K-alpha pattern, 10-80 deg 2-theta in 0.05 deg steps, Gaussian peaks + noise."""
    rng = random.Random(seed)
    out = []
    for i in range(1401):
        tt = round(10 + 0.05 * i, 2)
        y = 120 + 900 / tt
        for name, frac in phases.items():
            for pos, rel in PHASE_X if name == "X" else REFERENCES[name]:
                y += frac * rel * 28 * math.exp(-4 * math.log(2) * ((tt - pos) / 0.22) ** 2)
        out.append((tt, max(0, round(y + rng.gauss(0, math.sqrt(y))))))
    return out


def find_peaks(pat: list[tuple[float, int]]) -> list[tuple[float, float]]:
    """Local maxima of a 5-point moving average standing 6 sigma above the local floor."""
    ys = [v for _, v in pat]
    sm = [sum(ys[max(0, i - 2):i + 3]) / len(ys[max(0, i - 2):i + 3]) for i in range(len(ys))]
    peaks = []
    for i in range(10, len(sm) - 10):
        window = sm[i - 10:i + 11]
        floor = sorted(window)[3]
        if sm[i] == max(window) and sm[i] - floor > 6 * math.sqrt(floor):
            peaks.append((pat[i][0], round(sm[i] - floor, 1)))
    return peaks


def match(peaks: list[tuple[float, float]]) -> dict[str, Any]:
    """Best one- or two-phase explanation: share of peak height within TOL of a reference."""
    names = sorted(REFERENCES)
    combos = [(n,) for n in names] + [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    total = sum(h for _, h in peaks)

    def explained(c: tuple[str, ...]) -> float:
        pos = [p for ph in c for p, _ in REFERENCES[ph]]
        ok = sum(h for t, h in peaks if any(abs(t - p) <= TOL for p in pos))
        return round(ok / total, 2) if total else 0.0

    frac, best = max(((explained(c), c) for c in combos), key=lambda t: (t[0], -len(t[1])))
    pos = [p for ph in best for p, _ in REFERENCES[ph]]
    unexplained = sorted(((t, h) for t, h in peaks if all(abs(t - p) > TOL for p in pos)),
                         key=lambda th: (-th[1], th[0]))
    return {"best_phases": list(best), "explained_fraction": frac,
            "n_peaks": len(peaks), "peaks": [[t, h] for t, h in peaks],
            "unexplained_peaks": [[t, h] for t, h in unexplained]}


def xrd_csv(pat: list[tuple[float, int]]) -> bytes:
    """The diffractometer's export: 2-theta with two decimals, integer counts."""
    return csv_bytes(["two_theta", "intensity"], ([f"{t:.2f}", v] for t, v in pat))
