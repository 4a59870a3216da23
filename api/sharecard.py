"""Share images (Open Graph ``og:image``): a PNG of a board with a title and a line under it,
drawn with Pillow. A record's image shows its final position, the player, the result and the
code; a deal's, the deal. The same board view the pages draw (``pages.board_view``) goes in,
and the same inputs always give the same bytes, so a hash of them is a stable ETag.

Fonts: DejaVu Sans (Debian's ``fonts-dejavu-core``) for the cards and Latin text; a text with
Hangul, kana or CJK ideographs is drawn with Noto Sans CJK (``fonts-noto-cjk``) when it is
installed. Without either, Pillow's own font is used: the image is plainer, never missing.
"""

from __future__ import annotations

import io
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
    """``text`` in the largest font of at most ``size`` pixels (down to 60 %) that fits ``width``,
    cut with an ellipsis if even that is too wide."""
    cjk = needs_cjk(text)
    for pixels in range(size, int(size * 0.6) - 1, -2):
        face = font(pixels, bold, cjk)
        if draw.textlength(text, font=face) <= width:
            return text, face
    while len(text) > 1 and draw.textlength(text + "…", font=face) > width:
        text = text[:-1]
    return text + "…", face


def share_image(title: str, line: str, footer: str, board: dict[str, Any]) -> bytes:
    """The PNG: ``title`` and ``line`` at the top, the board below, ``footer`` in a corner."""
    image = Image.new("RGB", SIZE, FELT)
    draw = ImageDraw.Draw(image)
    width = SIZE[0] - 2 * MARGIN
    text, face = fitted(draw, title, 52, width, bold=True)
    draw.text((MARGIN, 30), text, font=face, fill="#ffffff")
    text, face = fitted(draw, line, 32, width)
    draw.text((MARGIN, 96), text, font=face, fill=GOLD)
    text, face = fitted(draw, footer, 22, width // 2)
    draw.text((SIZE[0] - MARGIN, SIZE[1] - 14), text, font=face, fill=PALE, anchor="rs")
    draw_board(draw, board, top=152, bottom=SIZE[1] - 44)
    out = io.BytesIO()
    # a palette of the few colours drawn: a fraction of the RGB file's size
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, "PNG", optimize=True)
    return out.getvalue()


def draw_board(draw: ImageDraw.ImageDraw, board: dict[str, Any], top: int, bottom: int) -> None:
    """The piles as ``pages.board_view`` describes them: stock, waste and foundations in a row,
    the columns under it, fanned so that the longest fits above ``bottom``."""
    columns = board["columns"]
    count = max(len(columns), len(board["foundations"]) + (2 if board["stock"] is not None else 0))
    gap = 14
    card_w = min(96, (SIZE[0] - 2 * MARGIN - (count - 1) * gap) // count)
    card_h = card_w * 7 // 5
    left = (SIZE[0] - (count * card_w + (count - 1) * gap)) // 2
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
