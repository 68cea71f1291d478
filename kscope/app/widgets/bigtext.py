"""Text as large as its widget allows: a 3×5 pixel font, scaled by a whole factor and drawn with
half blocks (two pixel rows per terminal row), for figures read from the back of a room.

Letters are drawn as capitals (a 3×5 cell has no room for lower case); a text the widget cannot
hold even at scale 1 is shown as plain bold text instead, never cut.
"""

from __future__ import annotations

from rich.align import Align
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

_FONT_ROWS = """
0 ### 1 .#. 2 ##. 3 ##. 4 #.# 5 ### 6 .## 7 ### 8 ### 9 ###
  #.#   ##.   ..#   ..#   #.#   #..   #..   ..#   #.#   #.#
  #.#   .#.   .#.   .#.   ###   ##.   ###   .#.   ###   ###
  #.#   .#.   #..   ..#   ..#   ..#   #.#   #..   #.#   ..#
  ###   ###   ###   ##.   ..#   ##.   ###   #..   ###   ##.
a .#. b ##. c .## d ##. e ### f ### g .## h #.# i ### j ..#
  #.#   #.#   #..   #.#   #..   #..   #..   #.#   .#.   ..#
  ###   ##.   #..   #.#   ##.   ##.   #.#   ###   .#.   ..#
  #.#   #.#   #..   #.#   #..   #..   #.#   #.#   .#.   #.#
  #.#   ##.   .##   ##.   ###   #..   .##   #.#   ###   .#.
k #.# l #.. m #.# n ##. o .#. p ##. q .#. r ##. s .## t ###
  #.#   #..   ###   #.#   #.#   #.#   #.#   #.#   #..   .#.
  ##.   #..   ###   #.#   #.#   ##.   #.#   ##.   .#.   .#.
  #.#   #..   #.#   #.#   #.#   #..   ##.   #.#   ..#   .#.
  #.#   ###   #.#   #.#   .#.   #..   .##   #.#   ##.   .#.
u #.# v #.# w #.# x #.# y #.# z ### _ ... . ... - ... + ...
  #.#   #.#   #.#   #.#   #.#   ..#   ...   ...   ...   .#.
  #.#   #.#   ###   .#.   .#.   .#.   ...   ...   ###   ###
  #.#   #.#   ###   #.#   .#.   #..   ...   ...   ...   .#.
  ###   .#.   #.#   #.#   .#.   ###   ###   .#.   ...   ...
× ... % #.. : ... ( .#. ) .#. ? ##. … ... / ..# , ... = ... ' .#.
  #.#   ..#   .#.   #..   ..#   ..#   ...   ..#   ...   ###   .#.
  .#.   .#.   ...   #..   ..#   .#.   ...   .#.   ...   ...   ...
  #.#   #..   .#.   #..   ..#   ...   ...   #..   .#.   ###   ...
  ...   ..#   ...   .#.   .#.   .#.   #.#   #..   #..   ...   ...
"""

ARROW = ("..#..", "...#.", "#####", "...#.", "..#..")
SPACE = ("..", "..", "..", "..", "..")


def _parse(rows: str) -> dict[str, tuple[str, ...]]:
    glyphs: dict[str, list[str]] = {}
    lines = [x for x in rows.splitlines() if x.strip()]
    for band in range(0, len(lines), 5):
        names = lines[band].split()[0::2]
        for i, row in enumerate(lines[band:band + 5]):
            cells = row.split()[1::2] if i == 0 else row.split()  # the first row names the glyphs
            for name, cell in zip(names, cells):
                glyphs.setdefault(name, []).append(cell)
    return {k: tuple(v) for k, v in glyphs.items()}


GLYPHS = {**_parse(_FONT_ROWS), "→": ARROW, " ": SPACE}
GAP = 1
"""Pixel columns between glyphs."""


def glyphs_for(text: str) -> list[tuple[str, ...]] | None:
    """The text's glyphs, or None when it has a character the font lacks."""
    out = []
    for ch in text.lower():
        glyph = GLYPHS.get(ch)
        if glyph is None:
            return None
        out.append(glyph)
    return out


def pixel_width(glyphs: list[tuple[str, ...]]) -> int:
    return sum(len(g[0]) for g in glyphs) + GAP * max(0, len(glyphs) - 1)


def best_scale(text: str, width: int, height: int, most: int = 8) -> int:
    """The largest whole scale at which text fits width columns and height rows; 0 when none."""
    glyphs = glyphs_for(text)
    if not glyphs:
        return 0
    wide = pixel_width(glyphs)
    for scale in range(most, 0, -1):
        if wide * scale <= width and (5 * scale + 1) // 2 <= height:
            return scale
    return 0


def big_lines(text: str, scale: int) -> list[str]:
    """The text drawn at scale, in half blocks: ceil(5·scale / 2) lines."""
    glyphs = glyphs_for(text) or []
    pixels = []
    for y in range(5):
        row = ("." * GAP).join(g[y] for g in glyphs)
        pixels += ["".join(ch * scale for ch in row)] * scale
    if len(pixels) % 2:
        pixels.append("." * len(pixels[0]))
    half = {(True, True): "█", (True, False): "▀", (False, True): "▄", (False, False): " "}
    return [
        "".join(half[top == "#", bottom == "#"] for top, bottom in zip(pixels[i], pixels[i + 1]))
        for i in range(0, len(pixels), 2)
    ]


class BigText(Widget):
    """`text` at the largest scale that fits; plain bold text when even scale 1 does not."""

    DEFAULT_CSS = "BigText { height: 1fr; width: 1fr; }"
    text: reactive[str] = reactive("", layout=False)

    def render(self):
        width, height = self.size.width, self.size.height
        scale = best_scale(self.text, width, height)
        if scale == 0:
            return Align(Text(self.text, style="bold"), align="center", vertical="middle")
        return Align(Text("\n".join(big_lines(self.text, scale))), align="center", vertical="middle")
