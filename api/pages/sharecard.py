"""Share images (Open Graph ``og:image``): a PNG drawn with Pillow of a :class:`Card`: a title
(the player and code, or the challenge's name and date), the result in large type (rank, moves
against par, time, streak where known), a footer, and a board beside them when there is one
(a record's final position, or the opening of a won game or a deal; none for a running
challenge, whose deal is secret). The same board view the pages draw (``pages.board_view``) goes
in, and the same inputs always give the same bytes, so a hash of them is a stable ETag.

Legible in a 360 px chat preview: no word is drawn smaller than ``MIN_TEXT`` pixels (at 1200×630,
a third of that on the preview); a text too long for its place is cut with an ellipsis instead.

Fonts: DejaVu Sans (Debian's ``fonts-dejavu-core``) for the cards and Latin text; a text with
Hangul, kana or CJK ideographs is drawn with Noto Sans CJK (``fonts-noto-cjk``) when it is
installed. Without either, Pillow's own font is used: the image is plainer, never missing.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

#: the image's size: Open Graph's usual 1.91:1
SIZE = (1200, 630)
FELT, INK, PAPER, RED, BACK, GOLD, PALE = "#1f6b3a", "#1b1b1b", "#fbfaf5", "#c0202a", "#22418f", "#f2c14e", "#d6e8da"
SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/opentype/noto", "/usr/share/fonts/noto-cjk")
LATIN_FONTS = {False: "DejaVuSans.ttf", True: "DejaVuSans-Bold.ttf"}
CJK_FONTS = {False: "NotoSansCJK-Regular.ttc", True: "NotoSansCJK-Bold.ttc"}
MARGIN = 48
#: the smallest text of the card's words (the cards' own indices on the board are pictures)
MIN_TEXT = 24
#: the sizes of the card's words: title, result, each detail, footer
TITLE_TEXT, RESULT_TEXT, DETAIL_TEXT, FOOTER_TEXT = 44, 80, 44, 28

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@cache
def font(size: int, bold: bool = False, cjk: bool = False) -> Font:
    """A font of ``size`` pixels: Noto Sans CJK for ``cjk`` text when installed, else DejaVu
    Sans, else Pillow's own."""
    names = ([CJK_FONTS[bold]] if cjk else []) + [LATIN_FONTS[bold], LATIN_FONTS[False]]
    for name in names:
        for folder in FONT_DIRS:
            try:
                return ImageFont.truetype(f"{folder}/{name}", size)
            except OSError:
                continue
    return ImageFont.load_default(size)


def needs_cjk(text: str) -> bool:
    """Whether ``text`` has Hangul, kana or CJK ideographs (which DejaVu Sans lacks)."""
    return any(0x1100 <= ord(ch) <= 0x11FF or 0x2E80 <= ord(ch) <= 0x9FFF or 0xAC00 <= ord(ch) <= 0xD7AF
               or 0xF900 <= ord(ch) <= 0xFAFF for ch in text)


def fitted(draw: ImageDraw.ImageDraw, text: str, size: int, width: int, bold: bool = False) -> tuple[str, Font]:
    """``text`` in the largest font of at most ``size`` pixels (down to 60 %, never under
    ``MIN_TEXT``) that fits ``width``, cut with an ellipsis if even that is too wide."""
    cjk = needs_cjk(text)
    for pixels in range(size, max(MIN_TEXT, int(size * 0.6)) - 1, -2):
        face = font(pixels, bold, cjk)
        if draw.textlength(text, font=face) <= width:
            return text, face
    while len(text) > 1 and draw.textlength(text + "…", font=face) > width:
        text = text[:-1]
    return text + "…", face


@dataclass(frozen=True)
class Card:
    """What a share image says: ``title`` on top, ``result`` in large type, ``details`` (moves
    against par, time, streak…) one a line under it, ``footer`` in a corner, and ``board`` (a
    ``pages.board_view``) beside them, or no board."""

    title: str
    result: str
    footer: str
    details: list[str] = field(default_factory=list)
    board: dict[str, Any] | None = None


def write(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, size: int, width: int, fill: str,
          bold: bool = False, anchor: str = "la") -> None:
    """One of the card's words, as large as ``size`` and never under ``MIN_TEXT`` pixels."""
    shown, face = fitted(draw, text, size, width, bold)
    draw.text(xy, shown, font=face, fill=fill, anchor=anchor)


def share_image(card: Card) -> bytes:
    """The PNG of ``card``: its words on the left (all the width without a board), the board on the right."""
    image = Image.new("RGB", SIZE, FELT)
    draw = ImageDraw.Draw(image)
    split = SIZE[0] * 11 // 20 if card.board is not None else SIZE[0] - MARGIN
    width = split - MARGIN - (24 if card.board is not None else 0)
    write(draw, (MARGIN, 40), card.title, TITLE_TEXT, width, "#ffffff", bold=True)
    write(draw, (MARGIN, 120), card.result, RESULT_TEXT, width, GOLD, bold=True)
    for index, detail in enumerate(card.details[:4]):
        write(draw, (MARGIN, 236 + index * 72), detail, DETAIL_TEXT, width, "#ffffff")
    write(draw, (MARGIN, SIZE[1] - 24), card.footer, FOOTER_TEXT, width, PALE, anchor="ls")
    if card.board is not None:
        draw_board(draw, card.board, (split, 40, SIZE[0] - MARGIN // 2, SIZE[1] - 40))
    out = io.BytesIO()
    # a palette of the few colours drawn: a fraction of the RGB file's size
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, "PNG", optimize=True)
    return out.getvalue()


def draw_board(draw: ImageDraw.ImageDraw, board: dict[str, Any], box: tuple[int, int, int, int]) -> None:
    """The piles as ``pages.board_view`` describes them, in ``box`` (left, top, right, bottom):
    stock, waste and foundations in a row, the columns under it, fanned so that the longest fits."""
    left, top, right, bottom = box
    columns = board["columns"]
    count = max(len(columns), len(board["foundations"]) + (2 if board["stock"] is not None else 0))
    gap = max(4, (right - left) // 80)
    card_w = min(96, (right - left - (count - 1) * gap) // count)
    card_h = card_w * 7 // 5
    left += (right - left - (count * card_w + (count - 1) * gap)) // 2
    x = lambda index: left + index * (card_w + gap)
    tops: list[tuple[str | None, bool]] = []  # (card, face-down) for each pile of the top row
    if board["stock"] is not None:
        tops += [(None, bool(board["stock"])), (board["waste"]["top"], False)]
    tops += [(pile["top"], False) for pile in board["foundations"]]
    start = count - len(tops)  # the top row ends where the columns end
    for index, (card, down) in enumerate(tops):
        draw_card(draw, x(start + index), top, card_w, card_h, card, down)
    row = top + card_h + gap
    longest = max((column["down"] + len(column["up"]) for column in columns), default=1)
    step = min(card_h // 4, (bottom - row - card_h) // max(1, longest - 1))
    for index, column in enumerate(columns):
        cards = [(None, True)] * column["down"] + [(card, False) for card in column["up"]]
        if not cards:
            draw_card(draw, x(index), row, card_w, card_h, None, False)
        for depth, (card, down) in enumerate(cards):
            draw_card(draw, x(index), row + depth * step, card_w, card_h, card, down)


def draw_card(draw: ImageDraw.ImageDraw, x: int, y: int, w: int, h: int, card: str | None, down: bool) -> None:
    """A card (``"TD"``), a face-down card, or an empty place."""
    box = (x, y, x + w, y + h)
    radius = max(4, w // 12)
    if down:
        draw.rounded_rectangle(box, radius, fill=BACK, outline="#f3f3f3", width=max(2, w // 24))
        return
    if card is None:
        draw.rounded_rectangle(box, radius, outline="#5c9a70", width=2)
        return
    colour = RED if card[1] in "HD" else INK
    draw.rounded_rectangle(box, radius, fill=PAPER, outline="#9a9a92", width=1)
    label = ("10" if card[0] == "T" else card[0]) + SUITS[card[1]]
    draw.text((x + w // 14, y + w // 20), label, font=font(max(12, w * 3 // 10), bold=True), fill=colour)
    draw.text((x + w - w // 10, y + h - w // 14), SUITS[card[1]], font=font(w // 2), fill=colour, anchor="rs")
