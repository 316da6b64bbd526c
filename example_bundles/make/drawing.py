"""Plot writers for example payloads: hand-built SVG and PNG, no plotting library.

A plotting library would stamp versions, dates or font metrics into its
output, and the committed bundles must regenerate byte for byte.  These
writers take numbers and return bytes; every coordinate is formatted with a
fixed precision, so equal inputs give equal files.

* :func:`line_chart`: SVG lines over generations (``evolutionary-search``);
* :func:`percent_bar_chart`: grouped SVG bars of percentages (``unsupported-gain``);
* :func:`xrd_png`: a diffraction pattern as a PNG (``closed-loop-lab``),
  encoded by :func:`png_rgb`.

Plots inside the agents' own scripts (the air-quality profile, ``mc_pi.py``'s
error plot) are payloads and live in ``sources/``, not here.
"""

from __future__ import annotations

import math
import struct
import zlib


def line_chart(title: str, ylabel: str, series: list[tuple[str, str, list[float]]],
               log: bool = False) -> bytes:
    """A small hand-built SVG line chart over generations 0..n."""
    w, h, left, right, top, bottom = 560, 320, 60, 20, 34, 250
    vals = [v for _, _, s in series for v in s]
    tr = (lambda v: math.log10(max(v, 1e-4))) if log else (lambda v: v)
    lo, hi = min(map(tr, vals)), max(map(tr, vals))
    lo, hi = (math.floor(lo), math.ceil(hi)) if log else (0.0, 5.0 * math.ceil(hi / 5) or 5.0)
    n = max(len(s) for _, _, s in series) - 1

    def px(i: int) -> float:
        return left + i * (w - left - right) / n

    def py(v: float) -> float:
        return bottom - (tr(v) - lo) / ((hi - lo) or 1) * (bottom - top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">',
           f"<title>{title}</title>", f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
           f'<text x="{left}" y="16" font-size="13">{title}</text>']
    ticks = [10.0 ** k for k in range(int(lo), int(hi) + 1)] if log else \
        [5.0 * k for k in range(int(hi) // 5 + 1)]
    for t in ticks:
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{py(t):.1f}" y2="{py(t):.1f}" '
                   'stroke="#dddddd"/>')
        out.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for i in range(n + 1):
        out.append(f'<text x="{px(i):.1f}" y="{bottom + 16}" text-anchor="middle">{i}</text>')
    out.append(f'<text x="{(left + w - right) / 2:.0f}" y="{bottom + 34}" '
               'text-anchor="middle">generation</text>')
    out.append(f'<text x="14" y="{(top + bottom) / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 14 {(top + bottom) / 2:.0f})">{ylabel}</text>')
    for k, (label, colour, s) in enumerate(series):
        pts = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(s))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<rect x="{left + 200 * k}" y="{h - 18}" width="10" height="10" '
                   f'fill="{colour}"/>')
        out.append(f'<text x="{left + 15 + 200 * k}" y="{h - 9}">{label}</text>')
    out.append("</svg>")
    return ("\n".join(out) + "\n").encode()


def percent_bar_chart(title: str, ylabel: str, groups: list[tuple[str, list[float]]],
                      series: list[tuple[str, str, str]]) -> bytes:
    """Grouped bars of percentages: one group per label, one bar per series.

    ``groups`` is ``(label, values)`` with one value per series; ``series`` is
    ``(key, colour, legend)``.  The value axis starts at the multiple of 5
    below the smallest value (the ylabel says so) and steps by 5.
    """
    w, h, left, bottom, top = 520, 300, 50, 250, 30
    values = [v for _, vs in groups for v in vs]
    lo, hi = 5.0 * (min(values) // 5), 5.0 * (max(values) // 5 + 1)

    def y(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">',
           f"<title>{title}</title>",
           f'<rect width="{w}" height="{h}" fill="#ffffff"/>']
    for tick in range(int(lo), int(hi) + 1, 5):
        out.append(f'<line x1="{left}" x2="{w - 10}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
                   'stroke="#dddddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick}%</text>')
    slot = (w - 10 - left) / len(groups)
    for i, (label, vs) in enumerate(groups):
        x0 = left + i * slot + slot * 0.15
        for j, ((key, colour, _), v) in enumerate(zip(series, vs, strict=True)):
            out.append(f'<rect x="{x0 + j * slot * 0.35:.1f}" y="{y(v):.1f}" '
                       f'width="{slot * 0.33:.1f}" height="{bottom - y(v):.1f}" fill="{colour}">'
                       f"<title>{label} {key}: {v:.1f}%</title></rect>")
        out.append(f'<text x="{x0 + slot * 0.34:.1f}" y="{bottom + 16}" text-anchor="middle">'
                   f"{label}</text>")
    out.append(f'<line x1="{left}" x2="{w - 10}" y1="{bottom}" y2="{bottom}" stroke="#333333"/>')
    for j, (_, colour, legend) in enumerate(series):
        out += [f'<rect x="{left + 8 + 192 * j}" y="8" width="10" height="10" fill="{colour}"/>',
                f'<text x="{left + 22 + 192 * j}" y="17">{legend}</text>']
    out += [f'<text x="12" y="{(top + bottom) / 2:.0f}" text-anchor="middle" '
            f'transform="rotate(-90 12 {(top + bottom) / 2:.0f})">{ylabel} '
            f"(axis starts at {lo:.0f}%)</text>", "</svg>"]
    return ("\n".join(out) + "\n").encode()


def png_rgb(w: int, h: int, px: bytes | bytearray) -> bytes:
    """Encode ``w`` x ``h`` 8-bit RGB pixels (row-major) as a PNG: IHDR, one IDAT, IEND.

    No filter (type 0 on every row) and zlib level 9, so equal pixels give
    equal bytes on every machine with the same zlib.
    """
    raw = b"".join(b"\x00" + bytes(px[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(
            ">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


#: A 3x5 bitmap font for the digits 0-9, read row by row ('1' = ink).
DIGITS = ("111101101101111", "010110010010111", "111001111100111", "111001111001111",
          "101101111001001", "111100111001111", "111100111101111", "111001001001001",
          "111101111101111", "111101111001111")


def xrd_png(pat: list[tuple[float, int]], ref_positions: list[float]) -> bytes:
    """A 640x260 RGB line plot (zlib + struct, no imaging library, so bytes are stable).

    Blue: the pattern.  Grey ticks under the axis: every reference peak position.
    Axis labels are 2-theta degrees drawn with a 3x5 digit font.
    """
    w, h, left, right, top, bottom = 640, 260, 20, 10, 10, 225
    px = bytearray(b"\xff" * (w * h * 3))

    def dot(x: int, y: int, rgb: tuple[int, int, int]) -> None:
        if 0 <= x < w and 0 <= y < h:
            px[(y * w + x) * 3:(y * w + x) * 3 + 3] = bytes(rgb)

    def sx(t: float) -> int:
        return left + round((t - 10) / 70 * (w - left - right - 1))

    peak = max(v for _, v in pat)

    def sy(v: float) -> int:
        return bottom - round(v / peak * (bottom - top))

    for x in range(left, w - right):
        dot(x, bottom, (60, 60, 60))
    for y in range(top, bottom + 1):
        dot(left, y, (60, 60, 60))
    for pos in ref_positions:
        for y in range(bottom + 2, bottom + 6):
            dot(sx(pos), y, (170, 170, 170))
    for deg in range(10, 81, 10):
        for y in range(bottom, bottom + 9):
            dot(sx(deg), y, (60, 60, 60))
        for k, ch in enumerate(str(deg)):
            bits = DIGITS[int(ch)]
            for i, bit in enumerate(bits):
                if bit == "1":
                    for dx in (0, 1):
                        for dy in (0, 1):
                            dot(sx(deg) - 7 + k * 8 + (i % 3) * 2 + dx,
                                bottom + 13 + (i // 3) * 2 + dy, (30, 30, 30))
    prev = None
    for t, v in pat:
        cur = (sx(t), sy(v))
        if prev is not None:
            steps = max(abs(cur[0] - prev[0]), abs(cur[1] - prev[1]), 1)
            for k in range(steps + 1):
                dot(prev[0] + round((cur[0] - prev[0]) * k / steps),
                    prev[1] + round((cur[1] - prev[1]) * k / steps), (31, 119, 180))
        prev = cur
    return png_rgb(w, h, px)
