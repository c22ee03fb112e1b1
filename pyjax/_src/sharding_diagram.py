"""jax.debug.visualize_sharding's diagram: a grid with one cell per block that a sharding
cuts a 1-D or 2-D array into, labelled with the devices holding it. JAX draws it as a
`rich` table; this module lays it out by the same rules, character for character: each
cell is sized from the block's share of the array (clamped to [min_width, max_width]),
the columns shrink as rich shrinks them when the table is wider than max_width, and a
label too long for its cell wraps at spaces, a word that still does not fit ending in
"…". In a terminal, with a color map (or matplotlib's tab20b), the cells are colored
blocks instead of a boxed grid. Imports numpy only."""
from __future__ import annotations

import os
import re
import sys

import numpy as np

_WORD = re.compile(r"\s*\S+\s*")
_HEIGHT_TO_WIDTH = 2.5     # a character cell is about 2.5 times as tall as it is wide


class _Cell:
    """One block's label and its padding (top, right, bottom, left), as JAX sets them."""

    def __init__(self, label, top, right, bottom, left, color=None):
        self.label = label
        self.top, self.right, self.bottom, self.left = top, right, bottom, left
        self.color = color

    def measure(self, max_width):
        """(minimum, maximum) width the cell asks for, at most max_width."""
        if max_width < 1:
            return 0, 0
        extra = self.left + self.right
        if max_width - extra < 1:
            return max_width, max_width
        words = self.label.split()
        low, high = max(len(w) for w in words), len(self.label)
        low, high = min(low, high, max_width), min(high, max_width)
        return min(low + extra, max_width), min(high + extra, max_width)

    def render(self, width):
        """The cell's lines at `width` columns: the label centered (wrapped if needed)
        between the padding; lines may run past `width` (the table crops them)."""
        inner = width - self.left - self.right
        text = _wrapped(self.label, min(len(self.label), inner)) if inner >= 1 else []
        shape = max((len(t) for t in text), default=0)
        lines = [" " * width] * self.top
        excess = inner - shape
        for t in text:
            t = t.ljust(shape)
            if excess > 0:
                t = " " * (excess // 2) + t + " " * (excess - excess // 2)
            lines.append(" " * self.left + t + " " * self.right)
        lines += [" " * width] * self.bottom
        return lines or [""]       # an empty cell still takes a line, as in rich


def _wrapped(text, width):
    """`text` split at spaces into lines of `width` (each padded to it); a word longer
    than a line is cut to width - 1 characters and "…"."""
    lines, line = [], ""
    for word in _WORD.findall(text):
        if line and len(line) + len(word.rstrip()) > width:
            lines.append(line)
            line = ""
        line += word
    lines.append(line)
    out = []
    for line in lines:
        line = line.rstrip() if len(line) > width else line
        if len(line) > width:
            line = line[:width - 1] + "…"
        out.append(line.ljust(width)[:width])
    return out


def _ratio_reduce(total, ratios, maximums, values):
    """Takes `total` off `values` in proportion to `ratios`, each at most its maximum."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums)]
    total_ratio, out = sum(ratios), []
    if not total_ratio:
        return list(values)
    for ratio, maximum, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            taken = min(maximum, round(ratio * total / total_ratio))
            out.append(value - taken)
            total -= taken
            total_ratio -= ratio
        else:
            out.append(value)
    return out


def _column_widths(columns, max_width):
    """The widths of the columns (lists of cells), as rich's table sets them: each as
    wide as its widest cell; when they do not fit in max_width, the widest shrink first,
    then all evenly, and each is measured again at its new width."""
    def widest(column, limit):
        return max((c.measure(limit)[1] for c in column), default=0) if limit >= 1 else 0

    widths = [widest(col, max_width) or 1 for col in columns]
    if sum(widths) > max_width:
        excess = sum(widths) - max_width
        while sum(widths) and excess > 0:
            top = max(widths)
            second = max((w for w in widths if w != top), default=0)
            ratios = [1 if w == top else 0 for w in widths]
            if not top - second:
                break
            widths = _ratio_reduce(excess, ratios, [min(excess, top - second)] * len(widths),
                                   widths)
            excess = sum(widths) - max_width
        if sum(widths) > max_width:
            widths = _ratio_reduce(sum(widths) - max_width, [1] * len(widths), widths, widths)
        widths = [widest(col, w) for col, w in zip(columns, widths)]
    return widths


def _grid(rows, max_width):
    """The boxed table (rich.box.SQUARE, a rule between rows) of a grid of cells."""
    widths = _column_widths(list(zip(*rows)), max_width - (len(rows[0]) + 1))

    def rule(left, mid, right):
        return left + mid.join("─" * w for w in widths) + right

    out = [rule("┌", "┬", "┐")]
    for r, row in enumerate(rows):
        cells = [c.render(w) for c, w in zip(row, widths)]
        height = max(len(lines) for lines in cells)
        for i in range(height):
            out.append("│" + "│".join((lines[i] if i < len(lines) else "").ljust(w)[:w]
                                      for lines, w in zip(cells, widths)) + "│")
        out.append(rule("├", "┼", "┤") if r < len(rows) - 1 else rule("└", "┴", "┘"))
    return out


def _colored(rows, max_width):
    """Unboxed colored blocks: each cell's lines on its background color."""
    widths = _column_widths(list(zip(*rows)), max_width)
    out = []
    for row in rows:
        cells = [c.render(w) for c, w in zip(row, widths)]
        height = max(len(lines) for lines in cells)
        for i in range(height):
            out.append("".join(
                _ansi(c.color) + (lines[i] if i < len(lines) else "").ljust(w)[:w] + "\x1b[0m"
                for c, lines, w in zip(row, cells, widths)))
    return out


def _ansi(color):
    """The escape for `color` (#RRGGBB) as background, black or white text on it."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    fg = (0, 0, 0) if r * 0.299 + g * 0.587 + b * 0.114 > 186 else (255, 255, 255)
    return "\x1b[38;2;{};{};{};48;2;{};{};{}m".format(*fg, r, g, b)


def _color_map(use_color, color_map):
    """The color map to paint with, or None: colors need a terminal (and no NO_COLOR or
    TERM=dumb) and a map, matplotlib's tab20b by default."""
    if not use_color or not sys.stdout.isatty() or os.environ.get("NO_COLOR") \
            or os.environ.get("TERM") == "dumb":
        return None
    if color_map is None:
        try:
            import matplotlib    # optional: without it the diagram is not colored
        except ModuleNotFoundError:
            return None
        color_map = matplotlib.colormaps["tab20b"]
    return color_map


def _hex(color):
    if isinstance(color, str):
        return color
    return "#" + "".join(f"{int(a * 255):02X}" for a in color[:3])


def _colors(color_map, count):
    """count colors spread over the map, neighbours far apart (as JAX picks them)."""
    values, i = np.linspace(0, 1, count), 0
    for _ in range(count):
        yield _hex(color_map(values[i]))
        i = (i + count // 2 + (count % 2 == 0)) % count


def _chunk_index(size, index):
    if isinstance(index, int):
        index = slice(index, index + 1)
    if index.start is None and index.stop is None:
        return 0, 1.0
    step = index.stop - index.start
    return index.start // step, step / size


def sharding_diagram(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                     max_width=80, color_map=None):
    """The lines of the diagram of `sharding` over an array of `shape` (1-D or 2-D)."""
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 "
                         f"dimensions; got shape {tuple(shape)}.")
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    kind = next(iter(sharding.device_set)).platform.upper()
    blocks = {}      # (row, column) -> [device ids, width share, height share or None]
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        parts = [_chunk_index(n, i) for n, i in zip(shape, index)]
        if len(shape) == 1:
            parts = [(0, None)] + parts
        key = (parts[0][0], parts[1][0])
        blocks.setdefault(key, [set(), parts[1][1], parts[0][1]])[0].add(device.id)
    colors = _color_map(use_color, color_map)
    num_rows = max(r for r, _ in blocks) + 1
    num_cols = max(c for _, c in blocks) + 1
    paint = _colors(colors, num_rows * num_cols) if colors is not None else None
    rows = []
    for r in range(num_rows):
        row = []
        for c in range(num_cols):
            ids, width_share, height_share = blocks[r, c]
            label = f"{kind} " + ",".join(str(i) for i in sorted(ids))
            width = int(width_share * base_width * _HEIGHT_TO_WIDTH)
            height = 1 if height_share is None else int(height_share * base_height)
            width = min(max(width, min_width), max_width)
            left, odd = divmod(width - len(label) - 2, 2)
            top, odd_height = divmod(height - 2, 2)
            pad = [top, left + odd, top + odd_height, left]
            if paint is not None:
                pad = [p + 1 for p in pad]
            row.append(_Cell(label, *(max(p, 0) for p in pad),
                             color=next(paint) if paint is not None else None))
        rows.append(row)
    return _colored(rows, max_width) if paint is not None else _grid(rows, max_width)


__all__ = ["sharding_diagram"]
