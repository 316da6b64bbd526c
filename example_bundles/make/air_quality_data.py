"""The air-quality source file, synthesised, and an independent reading of it.

The data are synthetic (no download is possible here, and the examples must
regenerate byte for byte): hourly readings in the UCI Air Quality layout
(``;``-separated, decimal commas, ``-200`` = missing, blank ``;;;`` rows at
the end) with weekday rush hours, instrument outages and a seeded
``random.Random``.

:func:`independent_summary` is the evaluator's own reading of that file,
written apart from the agent's analysis script on purpose: a claim is only
``supported`` if two independent readings of the source agree.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Any


def _bump(x: float, mu: float, sd: float) -> float:
    """A Gaussian bump of height 1 at ``mu`` (a rush hour, in hours of the day)."""
    return math.exp(-0.5 * ((x - mu) / sd) ** 2)


def synth_raw_csv(rows: int = 2400, seed: int = 2004) -> bytes:
    """Hourly readings with weekday rush hours, instrument outages and blank tail rows."""
    rng = random.Random(seed)

    def outages(n: int, lo: int, hi: int) -> list[range]:
        spans = []
        for _ in range(n):
            first = rng.randrange(rows - hi)
            spans.append(range(first, first + rng.randint(lo, hi)))
        return spans

    co_gaps, nox_gaps, station_gaps = outages(5, 12, 60), outages(3, 20, 70), outages(1, 18, 30)
    lines = ["Date;Time;CO(GT);PT08.S1(CO);C6H6(GT);NOx(GT);NO2(GT);T;RH;AH;;"]
    start = datetime(2004, 3, 10, 18)

    def dec(v: float, places: int = 1) -> str:
        return f"{v:.{places}f}".replace(".", ",")

    for i in range(rows):
        t = start + timedelta(hours=i)
        h, wk = t.hour, (1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.55)[t.weekday()]
        cars = 0.25 + 0.95 * _bump(h, 8.3, 1.2) + 1.1 * _bump(h, 19.2, 1.5) \
            + 0.35 * _bump(h, 13.5, 2.2)
        vans = 0.25 + 1.25 * _bump(h, 7.9, 1.1) + 0.95 * _bump(h, 18.8, 1.4)
        co = max(0.1, (0.4 + 2.7 * cars * wk) * rng.lognormvariate(0, 0.22)
                 * (1 - 0.15 * i / rows))
        s1 = round(720 + 215 * co + rng.gauss(0, 35))
        c6 = max(0.1, 4.1 * co ** 1.12 * rng.lognormvariate(0, 0.12))
        nox = round(max(5, (35 + 190 * vans * wk) * rng.lognormvariate(0, 0.25)))
        no2 = round(max(5, (48 + 30 * cars * wk + 34 * _bump(h, 20.8, 2.0))
                        * rng.lognormvariate(0, 0.15)))
        base = 9 + 11 * i / rows
        temp = base + 5.5 * math.sin((h - 9) / 24 * 2 * math.pi) + rng.gauss(0, 1.1)
        rh = min(92.0, max(14.0, 62 - 2.1 * (temp - base) + rng.gauss(0, 6)))
        ah = rh * 6.112 * math.exp(17.67 * temp / (temp + 243.5)) * 2.1674 / (273.15 + temp) / 10
        cells = [dec(co), str(s1), dec(c6), str(nox), str(no2), dec(temp), dec(rh), dec(ah, 4)]
        gone = set()
        if any(i in g for g in co_gaps) or rng.random() < 0.025:
            gone.add(0)
        if any(i in g for g in nox_gaps) or rng.random() < 0.02:
            gone.update((3, 4))
        if any(i in g for g in station_gaps):
            gone.update((1, 2, 5, 6, 7))
        cells = ["-200" if k in gone else c for k, c in enumerate(cells)]
        lines.append(f"{t:%d/%m/%Y};{t:%H.%M.%S};" + ";".join(cells) + ";;")
    lines += [";" * 11] * 3
    return ("\n".join(lines) + "\n").encode()


def independent_summary(raw: bytes) -> dict[str, Any]:
    """Recompute row count, date range and hourly means straight from the raw CSV.

    Written separately from the analysis script on purpose: a claim is only
    ``supported`` if two independent readings of the source agree.
    """
    every = [ln.split(";") for ln in raw.decode("utf-8").splitlines()[1:]]
    rows = [r for r in every if any(c.strip() for c in r)]
    header = raw.decode("utf-8").splitlines()[0].split(";")
    cols = {name: header.index(src) for name, src in
            (("CO", "CO(GT)"), ("NOx", "NOx(GT)"), ("NO2", "NO2(GT)"), ("C6H6", "C6H6(GT)"))}
    sums: dict[tuple[int, str], list[float]] = {}
    for r in rows:
        hour = int(r[1].split(".")[0])
        for name, i in cols.items():
            v = float(r[i].replace(",", "."))
            if v != -200:
                sums.setdefault((hour, name), []).append(v)
    means = {k: f"{sum(v) / len(v):.3f}" for k, v in sums.items()}

    def stamp(r: list[str]) -> str:
        d, m, y = r[0].split("/")
        return f"{y}-{m}-{d}T{r[1][:2]}:{r[1][3:5]}"

    def peak(name: str) -> int:
        return max(range(24), key=lambda h: float(means[(h, name)]))

    peaks = {n: peak(n) for n in cols}
    missing = {n: sum(1 for r in rows if float(r[i].replace(",", ".")) == -200)
               for n, i in cols.items()}
    return {"rows": len(rows), "blank": len(every) - len(rows), "first": stamp(rows[0]),
            "last": stamp(rows[-1]), "means": means, "peaks": peaks, "missing": missing,
            "missing_pct": {n: round(100 * m / len(rows), 1) for n, m in missing.items()}}
