// The replay viewer: the server draws it at one step (board, counters, status, log with
// aria-current); with the positions of every step (frames) this steps without reloading:
// buttons, play/pause at a chosen speed, a slider, keys, and the log. After each step the
// piles the card left and reached are highlighted and the card glides there (not with
// prefers-reduced-motion). Only the log panel scrolls, never the page.

import { t } from "./common.js";
import { renderBoard } from "./board.js";

const KEYS = { ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last", " ": "play" };
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

function typing(target, key) {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return true;
  return key === " " && /^(BUTTON|A)$/.test(target.tagName); // Space already presses a focused control
}

export class ReplayViewer {
  /**
   * @param root     the viewer's section (macro `viewer` in macros.html), drawn by the server
   * @param syncUrl  keep the page's address at the step shown (`?step=N`)
   */
  constructor(root, { syncUrl = false } = {}) {
    this.root = root;
    this.syncUrl = syncUrl;
    this.frames = null;
    this.step = Number(root.dataset.step) || 0;
    this.total = Number(root.dataset.total) || 0;
    this.timer = null;
    this.holder = root.querySelector("[data-board-holder]");
    this.status = root.querySelector("[data-status]");
    this.slider = root.querySelector("[data-slider]");
    this.speed = root.querySelector("[data-speed]");
    this.playButton = root.querySelector("[data-play]");
    this.logPanel = root.querySelector("[data-log-panel]");
    this.items = [...root.querySelectorAll("[data-log] [data-step]")];
    this.goButtons = [...root.querySelectorAll("[data-go]")];
    this.counters = Object.fromEntries(
      [...root.querySelectorAll("[data-counter]")].map((node) => [node.dataset.counter, node]),
    );
    for (const button of this.goButtons) button.addEventListener("click", () => this.move(button.dataset.go));
    this.playButton.addEventListener("click", () => this.togglePlay());
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    this.speed.addEventListener("change", () => { if (this.timer) this.play(); });
    this.items.forEach((item, i) => {
      item.addEventListener("click", (event) => {
        // without the frames, or with a modifier (a new tab), a link opens its step's page
        if (!this.frames || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        this.pause();
        this.go(i + 1);
      });
      item.addEventListener("keydown", (event) => this.onLogKey(event));
    });
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  /** Bring the viewer to life with the position after every action ([frames[0]: the deal, …]). */
  load(frames) {
    this.frames = frames;
    this.total = frames.length - 1;
    this.slider.max = String(this.total);
    for (const control of [this.slider, this.speed, this.playButton, ...this.items]) control.disabled = false;
    this.go(this.step, { animate: false });
  }

  move(where) {
    if (where === "play") return this.togglePlay();
    const target = { first: 0, back: this.step - 1, forward: this.step + 1, last: this.total }[where];
    this.pause();
    this.go(target);
  }

  togglePlay() {
    if (this.timer) this.pause();
    else this.play();
  }

  play() {
    if (!this.frames) return;
    clearInterval(this.timer);
    if (this.step >= this.total) this.go(0);
    this.timer = setInterval(() => {
      if (this.step >= this.total) this.pause();
      else this.go(this.step + 1);
    }, Number(this.speed.value));
    this.showPlaying(true);
  }

  pause() {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.showPlaying(false);
  }

  showPlaying(playing) {
    this.playButton.setAttribute("aria-pressed", String(playing));
    this.playButton.querySelector("[data-play-label]").textContent = playing ? t("pause") : t("play");
    this.playButton.querySelector("[data-play-icon]").textContent = playing ? "❚❚" : "▶";
  }

  onKey(event) {
    const where = KEYS[event.key];
    if (!where || !this.frames || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (typing(event.target, event.key) || this.root.closest("[hidden]")) return;
    event.preventDefault();
    this.move(where);
  }

  onLogKey(event) {
    // in the log, up and down move through the actions, and the focus goes along
    const delta = { ArrowUp: -1, ArrowDown: 1 }[event.key];
    if (!delta || !this.frames) return;
    event.preventDefault();
    event.stopPropagation();
    this.pause();
    this.go(Math.max(1, this.step + delta));
    this.items[this.step - 1]?.focus({ preventScroll: true });
  }

  /** The card that moves between `from` and `to` (highlighted piles) going to `step`. */
  transition(step) {
    const forward = step === this.step + 1;
    const item = forward ? this.items[step - 1] : step === this.step - 1 ? this.items[this.step - 1] : null;
    if (!item || !item.dataset.from) return null;
    const { from, to, card } = item.dataset;
    return forward ? { from, to, card } : { from: to, to: from, card };
  }

  /** Show the position after action `step` (0: the deal). */
  go(step, { animate = true } = {}) {
    if (!this.frames) return;
    const target = Math.max(0, Math.min(this.total, step));
    const moving = animate && !reducedMotion.matches ? this.transition(target) : null;
    const before = moving ? this.cardRect(moving.from, moving.card) : null;
    const logHadFocus = this.items.includes(document.activeElement);
    this.step = target;
    const frame = this.frames[target];
    this.holder.replaceChildren(renderBoard(frame.board));
    this.highlight();
    if (before) this.glide(before, moving.to, moving.card);
    this.counters.step.textContent = `${target} / ${this.total}`;
    this.counters.score.textContent = String(frame.score);
    this.counters.moves.textContent = String(frame.moves);
    const label = target ? this.items[target - 1]?.textContent.trim() ?? frame.action : "";
    let status = target === 0
      ? t("step_start", { score: frame.score, moves: frame.moves })
      : t("step", { step: target, total: this.total, action: label, score: frame.score, moves: frame.moves });
    if (frame.won) status += ` ${t("step_won")}`;
    this.status.textContent = status;
    this.slider.value = String(target);
    this.slider.setAttribute("aria-valuetext", `${target} / ${this.total}`);
    this.items.forEach((item, i) => {
      const current = i + 1 === target;
      if (current) item.setAttribute("aria-current", "step");
      else item.removeAttribute("aria-current");
      item.tabIndex = current || (target === 0 && i === 0) ? 0 : -1;
    });
    const currentItem = this.items[target - 1];
    if (currentItem) {
      this.scrollLogTo(currentItem);
      if (logHadFocus) currentItem.focus({ preventScroll: true });
    } else if (this.logPanel) {
      this.logPanel.scrollTop = 0;
    }
    this.updateButtons();
    if (this.syncUrl) {
      const url = new URL(window.location.href);
      if (target) url.searchParams.set("step", String(target));
      else url.searchParams.delete("step");
      window.history.replaceState(window.history.state, "", url);
    }
  }

  /** Buttons that would do nothing are disabled; the focus leaves one that becomes so. */
  updateButtons() {
    const focused = document.activeElement;
    for (const button of this.goButtons) {
      const atStart = button.dataset.go === "first" || button.dataset.go === "back";
      button.disabled = atStart ? this.step === 0 : this.step === this.total;
    }
    if (focused instanceof HTMLButtonElement && focused.disabled && this.goButtons.includes(focused)) {
      const atStart = focused.dataset.go === "first" || focused.dataset.go === "back";
      this.root.querySelector(`[data-go=${atStart ? "forward" : "back"}]`)?.focus({ preventScroll: true });
    }
  }

  /** Mark the piles the current step's card left and reached. */
  highlight() {
    const item = this.items[this.step - 1];
    if (!item || !item.dataset.from) return;
    this.holder.querySelector(`[data-pile="${item.dataset.from}"]`)?.classList.add("moved-from");
    this.holder.querySelector(`[data-pile="${item.dataset.to}"]`)?.classList.add("moved-to");
  }

  /** Where a card (or, without one, a pile's top) is on the board now. */
  cardRect(pile, card) {
    const node = this.findCard(pile, card);
    return node ? node.getBoundingClientRect() : null;
  }

  findCard(pile, card) {
    const box = this.holder.querySelector(`[data-pile="${pile}"]`);
    if (!box) return null;
    const cards = box.querySelectorAll(card ? `.card[data-card="${card}"]` : ".card");
    return cards[cards.length - 1] || box.querySelector(".slot, .cards");
  }

  /** Let the moved card (and what it carries) glide from where it was to where it is. */
  glide(before, pile, card) {
    const node = this.findCard(pile, card);
    if (!node || !node.classList.contains("card")) return;
    const after = node.getBoundingClientRect();
    const dx = before.left - after.left;
    const dy = before.top - after.top;
    if (!dx && !dy) return;
    const duration = Math.min(220, Number(this.speed.value) / 2);
    const group = [node];
    for (let next = node.nextElementSibling; next; next = next.nextElementSibling) group.push(next);
    for (const moved of group) {
      moved.classList.add("moving");
      moved.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }],
        { duration, easing: "ease-out" }).finished.then(() => moved.classList.remove("moving"), () => {});
    }
  }

  /** Scroll the log panel (not the page) so that `item` is in view below its heading. */
  scrollLogTo(item) {
    const panel = this.logPanel;
    if (!panel || panel.scrollHeight <= panel.clientHeight) return;
    const heading = panel.querySelector("h3, h4");
    const top = panel.getBoundingClientRect().top + (heading ? heading.offsetHeight : 0);
    const bottom = panel.getBoundingClientRect().bottom;
    const box = item.getBoundingClientRect();
    if (box.top < top) panel.scrollTop -= top - box.top;
    else if (box.bottom > bottom) panel.scrollTop += box.bottom - bottom;
  }
}
