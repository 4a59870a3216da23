// The replay viewer: step forward and back through the positions the server computed
// (frames), with buttons, arrow keys (Home and End too) and the log; the board, score,
// move counter and a spoken status follow each step, and the current action is marked.

import { el, t } from "./common.js";
import { renderBoard } from "./board.js";

const KEYS = { ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last" };

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

export class ReplayViewer {
  /**
   * @param root     the viewer's section (macro `viewer` in macros.html)
   * @param frames   [{action, score, moves, takebacks, won, board}], the first one the deal
   * @param failing  the action that could not be played ({index, action, rule, kind, message}), or null
   */
  /** @param root the viewer's section (macro `viewer` in macros.html) */
  constructor(root) {
    this.root = root;
    this.frames = null;
    this.total = 0;
    this.step = 0;
    this.items = [];
    this.holder = root.querySelector("[data-board-holder]");
    this.status = root.querySelector("[data-status]");
    this.counters = Object.fromEntries(
      [...root.querySelectorAll("[data-counter]")].map((node) => [node.dataset.counter, node]),
    );
    for (const button of root.querySelectorAll("[data-go]")) {
      button.addEventListener("click", () => {
        if (this.frames && button.getAttribute("aria-disabled") !== "true") this.move(button.dataset.go);
      });
    }
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  /**
   * Show a new replay, at its start.
   * @param frames   [{action, score, moves, takebacks, won, board}], the first one the deal
   * @param failing  the action that could not be played ({index, action, rule, kind, message}), or null
   */
  load({ frames, failing = null }) {
    this.frames = frames;
    this.total = frames.length - 1;
    this.buildLog(failing);
    for (const button of this.root.querySelectorAll("[data-go]")) button.disabled = false;
    this.go(0);
  }

  buildLog(failing) {
    const list = this.root.querySelector("[data-log]");
    list.replaceChildren();
    this.items = [];
    this.frames.slice(1).forEach((frame, i) => {
      const button = el("button", { type: "button", class: "action", tabindex: -1, "data-step": i + 1 }, frame.action);
      button.addEventListener("click", () => this.go(i + 1));
      button.addEventListener("keydown", (event) => this.onLogKey(event));
      this.items.push(button);
      list.append(el("li", {}, button));
    });
    if (failing) {
      const note = el("span", { class: "illegal-rule", id: "failing-rule" },
        t("illegal_action", { rule: failing.rule }), " — ", failing.message);
      list.append(
        el("li", { class: "failing" },
          el("span", { class: "action illegal", "data-failing": true, "aria-describedby": "failing-rule" }, failing.action),
          note),
        el("li", { class: "unplayed" }, t("not_played")),
      );
    }
  }

  move(where) {
    const target = { first: 0, back: this.step - 1, forward: this.step + 1, last: this.total }[where];
    this.go(target);
  }

  onKey(event) {
    const where = KEYS[event.key];
    if (!where || !this.frames || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || typing(event.target)) return;
    if (this.root.closest("[hidden]")) return;
    event.preventDefault();
    this.move(where);
  }

  onLogKey(event) {
    // in the log, up and down move through the actions, and the focus goes along
    const delta = { ArrowUp: -1, ArrowDown: 1 }[event.key];
    if (!delta) return;
    event.preventDefault();
    this.go(this.step + delta);
    this.items[this.step - 1]?.focus();
  }

  /** Show the position after action `step` (0: the deal). */
  go(step) {
    const target = Math.max(0, Math.min(this.total, step));
    const logHadFocus = this.items.includes(document.activeElement);
    this.step = target;
    const frame = this.frames[target];
    this.holder.replaceChildren(renderBoard(frame.board));
    this.counters.step.textContent = `${target} / ${this.total}`;
    this.counters.score.textContent = String(frame.score);
    this.counters.moves.textContent = String(frame.moves);
    let status = target === 0
      ? t("step_start", { score: frame.score, moves: frame.moves })
      : t("step", { step: target, total: this.total, action: frame.action, score: frame.score, moves: frame.moves });
    if (frame.won) status += ` ${t("step_won")}`;
    this.status.textContent = status;
    this.items.forEach((button, i) => {
      const current = i + 1 === target;
      button.toggleAttribute("aria-current", current);
      if (current) button.setAttribute("aria-current", "step");
      button.tabIndex = current || (target === 0 && i === 0) ? 0 : -1;
    });
    const currentItem = this.items[target - 1];
    if (currentItem) {
      currentItem.scrollIntoView({ block: "nearest" });
      if (logHadFocus) currentItem.focus();
    }
    for (const button of this.root.querySelectorAll("[data-go]")) {
      const atEnd = button.dataset.go === "first" || button.dataset.go === "back" ? target === 0 : target === this.total;
      button.setAttribute("aria-disabled", String(atEnd));
    }
  }
}
