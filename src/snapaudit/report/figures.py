"""Hand-written inline SVG figures: no scripts, no external resources, every label escaped."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#2b6cb0", "#c05621", "#2f855a", "#b83280", "#718096", "#d69e2e")
_W, _H = 560, 330
_L, _R, _T, _B = 64, 20, 20, 76  # margins: the bottom one holds ticks, axis title, legend


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    y_lo: float | None = None
    y_hi: float | None = None


def _t(text: str) -> str:
    return escape(text, quote=True)


def value_label(v: float) -> str:
    """A printed value: an integer as such, anything else rounded to 2 decimals."""
    return str(round(v)) if abs(v - round(v)) < 1e-9 else f"{v:.2f}"


def tick_label(v: float) -> str:
    return f"{round(v, 6):g}"


def _svg(body: list[str], title: str, width: int = _W, height: int = _H) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}"><title>{_t(title)}</title>'
            + "".join(body) + "</svg>")


def _scale(lo: float, hi: float, a: float, b: float) -> tuple[float, float]:
    """Linear map [lo, hi] -> [a, b] as (slope, offset)."""
    span = hi - lo if hi != lo else 1.0
    slope = (b - a) / span
    return slope, a - slope * lo


def _step(span: float, n: int = 5) -> float:
    raw = span / n if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw))


def _range(values: Sequence[float], pad: float = 0.05,
           floor_zero: bool = False) -> tuple[float, float]:
    """A padded range that includes 0, widened to round tick steps; with ``floor_zero``
    (counts, shares) it starts at exactly 0 when no value is negative."""
    lo, hi = min([*values, 0.0]), max([*values, 0.0])
    extra = (hi - lo) * pad or 1.0
    step = _step(hi - lo + 2 * extra)
    low = 0.0 if floor_zero and lo >= 0 else math.floor((lo - extra) / step) * step
    return low, math.ceil((hi + extra) / step) * step


def _ticks(lo: float, hi: float) -> list[float]:
    step = _step(hi - lo)
    first = math.ceil(lo / step - 1e-9) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _axes(x_title: str, y_title: str, y_lo: float, y_hi: float,
          integer: bool = False) -> list[str]:
    """Both axes, each a ``<g class="axis">`` with its ticks and its ``axis-label`` title."""
    sy, oy = _scale(y_lo, y_hi, _H - _B, _T)
    y = [f'<g class="axis" data-axis="y"><line x1="{_L}" y1="{_T}" x2="{_L}" y2="{_H - _B}" '
         'stroke="#333"/>']
    for tick in _ticks(y_lo, y_hi):
        if integer and abs(tick - round(tick)) > 1e-9:
            continue
        yy = sy * tick + oy
        y.append(f'<text x="{_L - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end">'
                 f'{tick_label(tick)}</text><line x1="{_L - 3}" y1="{yy:.1f}" x2="{_L}" '
                 f'y2="{yy:.1f}" stroke="#333"/>')
    mid = (_T + _H - _B) / 2
    y.append(f'<text class="axis-label" x="14" y="{mid}" font-size="12" text-anchor="middle" '
             f'transform="rotate(-90 14 {mid})">{_t(y_title)}</text></g>')
    x = [f'<g class="axis" data-axis="x"><line x1="{_L}" y1="{_H - _B}" x2="{_W - _R}" '
         f'y2="{_H - _B}" stroke="#333"/>',
         f'<text class="axis-label" x="{(_L + _W - _R) / 2}" y="{_H - _B + 36}" font-size="12" '
         f'text-anchor="middle">{_t(x_title)}</text></g>']
    return ["".join(y), "".join(x)]


MARKERS = ("circle", "square", "diamond", "triangle")


def _marker(shape: str, x: float, y: float, color: str) -> str:
    if shape == "square":
        return (f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="none" '
                f'stroke="{color}" stroke-width="2"/>')
    if shape == "diamond":
        return (f'<path d="M{x:.1f} {y - 6:.1f}L{x + 6:.1f} {y:.1f}L{x:.1f} {y + 6:.1f}'
                f'L{x - 6:.1f} {y:.1f}Z" fill="none" stroke="{color}" stroke-width="2"/>')
    if shape == "triangle":
        return (f'<path d="M{x:.1f} {y - 6:.1f}L{x + 6:.1f} {y + 5:.1f}L{x - 6:.1f} '
                f'{y + 5:.1f}Z" fill="none" stroke="{color}" stroke-width="2"/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color}"/>'


def scatter(points: Sequence[Point], x_title: str, y_title: str, title: str,
            hlines: Sequence[tuple[float, str]] = ()) -> str:
    """Points with vertical interval whiskers and dashed zero lines. Points that share an x
    are drawn side by side (dodged) with distinct markers, so coinciding points stay
    visible; a legend names each marker. ``hlines``: labelled horizontal reference lines
    (a margin)."""
    xs = [p.x for p in points]
    ys = [v for p in points for v in (p.y, p.y_lo, p.y_hi) if v is not None]
    ys += [y for y, _ in hlines]
    x_lo, x_hi = _range(xs, 0.3)
    y_lo, y_hi = _range(ys)
    sx, ox = _scale(x_lo, x_hi, _L, _W - _R)
    sy, oy = _scale(y_lo, y_hi, _H - _B, _T)
    body = _axes(x_title, y_title, y_lo, y_hi)
    body.append(f'<line x1="{sx * 0 + ox:.1f}" y1="{_T}" x2="{sx * 0 + ox:.1f}" '
                f'y2="{_H - _B}" stroke="#999" stroke-dasharray="4 3"/>')
    body.append(f'<line x1="{_L}" y1="{oy:.1f}" x2="{_W - _R}" y2="{oy:.1f}" stroke="#999" '
                'stroke-dasharray="4 3"/>')
    for tick in _ticks(x_lo, x_hi):
        body.append(f'<text x="{sx * tick + ox:.1f}" y="{_H - _B + 16}" font-size="11" '
                    f'text-anchor="middle">{tick_label(tick)}</text>')
    for value, name in hlines:
        yy = sy * value + oy
        body.append(f'<line x1="{_L}" y1="{yy:.1f}" x2="{_W - _R}" y2="{yy:.1f}" '
                    'stroke="#c53030" stroke-dasharray="6 3"/>'
                    f'<text x="{_W - _R - 4}" y="{yy - 4:.1f}" font-size="11" fill="#c53030" '
                    f'text-anchor="end">{_t(name)}</text>')
    label_y = _spread([sy * p.y + oy + 4 for p in points], gap=14.0)
    same_x: dict[float, list[int]] = {}
    for i, p in enumerate(points):
        same_x.setdefault(round(p.x, 9), []).append(i)
    for i, p in enumerate(points):
        color, shape = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
        group = same_x[round(p.x, 9)]
        x = sx * p.x + ox + 14 * (group.index(i) - (len(group) - 1) / 2)
        y = sy * p.y + oy
        if p.y_lo is not None and p.y_hi is not None:
            lo, hi = sy * p.y_lo + oy, sy * p.y_hi + oy
            body.append(f'<line x1="{x:.1f}" y1="{lo:.1f}" x2="{x:.1f}" y2="{hi:.1f}" '
                        f'stroke="{color}" stroke-width="2"/>')
            for yy in (lo, hi):
                body.append(f'<line x1="{x - 5:.1f}" y1="{yy:.1f}" x2="{x + 5:.1f}" '
                            f'y2="{yy:.1f}" stroke="{color}" stroke-width="2"/>')
        body.append(_marker(shape, x, y, color))
        right = sx * p.x + ox + 14 * (len(group) - 1) / 2  # labels right of the group
        body.append(f'<text x="{right + 10:.1f}" y="{label_y[i]:.1f}" font-size="11" '
                    f'fill="{color}">{_t(p.label)} {value_label(p.y)}</text>')
    body.extend(_legend([p.label for p in points], shapes=True))
    return _svg(body, title)


def _spread(ys: Sequence[float], gap: float) -> list[float]:
    """Label baselines at least ``gap`` apart, each as near its point as that allows."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for prev, cur in itertools.pairwise(order):
        out[cur] = max(out[cur], out[prev] + gap)
    return out


def bars(labels: Sequence[str], series: Sequence[tuple[str, Sequence[float]]],
         x_title: str, y_title: str, title: str, counts: bool = False) -> str:
    """Grouped vertical bars: one group per label, one bar per series, values printed
    (rounded). ``counts``: the axis starts at 0 and has integer ticks. One unit per figure:
    never put pp and counts on the same axis."""
    values = [v for _, vs in series for v in vs]
    y_lo, y_hi = _range(values, floor_zero=counts)
    sy, oy = _scale(y_lo, y_hi, _H - _B, _T)
    body = _axes(x_title, y_title, y_lo, y_hi, integer=counts)
    group = (_W - _L - _R) / max(1, len(labels))
    width = group * 0.7 / max(1, len(series))
    for g, label in enumerate(labels):
        x0 = _L + g * group + group * 0.15
        for s, (_, vs) in enumerate(series):
            v = vs[g]
            top, base = sy * max(v, 0) + oy, sy * min(v, 0) + oy
            x = x0 + s * width
            body.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="{width - 2:.1f}" '
                        f'height="{max(base - top, 0.5):.1f}" fill="{PALETTE[s % 6]}"/>')
            body.append(f'<text x="{x + width / 2:.1f}" y="{top - 3:.1f}" font-size="10" '
                        f'text-anchor="middle">{value_label(v)}</text>')
        body.append(f'<text x="{x0 + group * 0.35:.1f}" y="{_H - _B + 16}" font-size="11" '
                    f'text-anchor="middle">{_t(label)}</text>')
    if len(series) > 1:
        body.extend(_legend([name for name, _ in series]))
    return _svg(body, title)


def _legend(names: Sequence[str], shapes: bool = False) -> list[str]:
    out = ['<g class="legend">']
    y = _H - _B + 52
    for i, name in enumerate(names):
        x = _L + 10 + i * 150
        color = PALETTE[i % 6]
        mark = (_marker(MARKERS[i % len(MARKERS)], x + 5, y + 5, color) if shapes
                else f'<rect x="{x}" y="{y}" width="10" height="10" fill="{color}"/>')
        out.append(f'{mark}<text x="{x + 14}" y="{y + 9}" font-size="11">{_t(name)}</text>')
    out.append("</g>")
    return out


def stacked(labels: Sequence[str], categories: Sequence[str],
             shares: Sequence[Sequence[float]], title: str,
             x_title: str = "percent of comparisons", y_title: str = "comparison") -> str:
    """Horizontal 100% stacked bars: ``shares[bar][category]`` in percent, with a 0-100 %
    axis and a legend of the categories."""
    left, span = 150.0, _W - 150 - _R
    bottom = 20 + 46 * len(labels)
    height = bottom + 60 + 22 * ((len(categories) + 2) // 3)
    body: list[str] = []
    for b, label in enumerate(labels):
        y = 20 + b * 46
        body.append(f'<text x="{left - 10}" y="{y + 20}" font-size="12" text-anchor="end">'
                    f'{_t(label)}</text>')
        x = left
        total = sum(shares[b]) or 1.0
        for c, share in enumerate(shares[b]):
            w = span * share / total
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="30" '
                        f'fill="{PALETTE[c % 6]}"><title>{_t(categories[c])}: {share:.1f}%'
                        '</title></rect>')
            if w > 34:
                body.append(f'<text x="{x + w / 2:.1f}" y="{y + 19}" font-size="11" '
                            f'fill="#fff" text-anchor="middle">{share:.1f}%</text>')
            x += w
    ticks = "".join(f'<line x1="{left + span * t / 100:.1f}" y1="{bottom}" '
                    f'x2="{left + span * t / 100:.1f}" y2="{bottom + 4}" stroke="#333"/>'
                    f'<text x="{left + span * t / 100:.1f}" y="{bottom + 16}" font-size="11" '
                    f'text-anchor="middle">{t}</text>' for t in (0, 25, 50, 75, 100))
    body.append(f'<g class="axis" data-axis="x"><line x1="{left}" y1="{bottom}" '
                f'x2="{left + span}" y2="{bottom}" stroke="#333"/>{ticks}'
                f'<text class="axis-label" x="{left + span / 2}" y="{bottom + 32}" '
                f'font-size="12" text-anchor="middle">{_t(x_title)}</text></g>')
    body.append(f'<g class="axis" data-axis="y"><line x1="{left}" y1="14" x2="{left}" '
                f'y2="{bottom}" stroke="#333"/><text class="axis-label" x="14" '
                f'y="{(14 + bottom) / 2}" font-size="12" text-anchor="middle" '
                f'transform="rotate(-90 14 {(14 + bottom) / 2})">{_t(y_title)}</text></g>')
    legend_y = bottom + 46
    for c, cat in enumerate(categories):
        x, y = 20 + (c % 3) * 180, legend_y + (c // 3) * 22
        body.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{PALETTE[c % 6]}"/>'
                    f'<text x="{x + 14}" y="{y + 9}" font-size="11">{_t(cat)}</text>')
    return _svg(body, title, _W, height)
