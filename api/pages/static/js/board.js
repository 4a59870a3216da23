// The board, drawn from a frame's `board` (see pages.board_view): the same markup as the
// template macro `board` in macros.html, with the same text alternatives per pile.

import { cardName, el, longestBuckets, t } from "./common.js";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

function colour(suit) {
  return "HD".includes(suit) ? "red" : "black";
}

/** A face-up card such as "TD": rank and suit in the corner, the suit again in the middle. */
export function cardElement(code) {
  const suit = code[1];
  return el(
    "span",
    { class: `card ${colour(suit)}`, "data-card": code, "data-suit": SUITS[suit], title: cardName(code) },
    el("span", { class: "rank" }, code[0] === "T" ? "10" : code[0]),
    el("span", { class: "suit" }, SUITS[suit]),
  );
}

function backElement() {
  return el("span", { class: "card back" });
}

/** The text alternative of every pile, as pages.board_labels makes them. */
export function boardLabels(board) {
  const columns = board.columns.map((column, i) => {
    const cards = [
      ...Array(column.down).fill(t("face_down")),
      ...column.up.map(cardName),
    ];
    return cards.length
      ? t("column", { number: i + 1, cards: cards.join(", ") })
      : t("column_empty", { number: i + 1 });
  });
  const foundations = board.foundations.map((pile, i) =>
    pile.top
      ? t("foundation", { number: i + 1, card: cardName(pile.top) })
      : t("foundation_empty", { number: i + 1 }),
  );
  let stock = null;
  let waste = null;
  if (board.stock !== null) {
    stock = t("stock", { count: board.stock });
    waste = board.waste.top
      ? t("waste", { card: cardName(board.waste.top), count: board.waste.count })
      : t("waste_empty");
  }
  return { columns, foundations, stock, waste };
}

function pile(kind, name, label, ...content) {
  return el(
    "div",
    { class: `pile ${kind}`, role: "img", "aria-label": label, "data-pile": name },
    el("span", { class: "pile-name" }, name),
    ...content,
  );
}

/** The board's `data-longest`: the first of the buckets that holds its longest column (pages.longest_bucket). */
function longestBucket(board) {
  const longest = Math.max(0, ...board.columns.map((column) => column.down + column.up.length));
  return longestBuckets.find((bucket) => longest <= bucket) ?? longestBuckets[longestBuckets.length - 1];
}

/** The whole board as a new element. */
export function renderBoard(board) {
  const labels = boardLabels(board);
  const hasStock = board.stock !== null;
  const top = el("div", { class: "board-top" });
  if (hasStock) {
    top.append(
      pile("stock", "S", labels.stock,
        el("div", { class: "slot" }, board.stock ? backElement() : null, el("span", { class: "count" }, String(board.stock)))),
      pile("waste", "W", labels.waste,
        el("div", { class: "slot" }, board.waste.top ? cardElement(board.waste.top) : null,
          el("span", { class: "count" }, String(board.waste.count)))),
    );
  }
  const foundations = el("div", { class: "foundations" });
  board.foundations.forEach((f, i) => {
    const content = f.top
      ? cardElement(f.top)
      : el("span", { class: `placeholder ${colour(f.suit)}` }, f.symbol);
    foundations.append(pile("foundation", `F${i + 1}`, labels.foundations[i], el("div", { class: "slot" }, content)));
  });
  top.append(foundations);
  const tableau = el("div", { class: "tableau", "data-columns": board.columns.length });
  board.columns.forEach((column, i) => {
    const cards = el("div", { class: "cards" });
    for (let k = 0; k < column.down; k++) cards.append(backElement());
    for (const code of column.up) cards.append(cardElement(code));
    tableau.append(pile("column", `T${i + 1}`, labels.columns[i], cards));
  });
  return el("div", {
    class: `board${hasStock ? " has-stock" : ""}`, "data-board": true, "data-columns": board.columns.length,
    "data-longest": longestBucket(board),
  }, top, tableau);
}
