// The replay viewer: the server draws it at one step (board, counters, status, the page of the
// log around it with aria-current); with the positions of the steps (frames, fetched one window
// of a log page at a time) this steps without reloading: buttons, play/pause at a chosen speed,
// a slider, keys (Space plays from anywhere on the page), the wheel over the board, and the log.
// After each step the piles the card left and reached are outlined, the moved card (and what it
// carried) glows, and it glides there (not with prefers-reduced-motion). Only the log panel
// scrolls, never the page.

import { copy, el, t } from "./common.js";
import { renderBoard } from "./board.js";

const KEYS = { ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last", " ": "play" };
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
const wideLayout = window.matchMedia("(min-width: 56rem)");
//: how far the wheel turns for one step (pixels; a mouse's notch is about 100)
const WHEEL_STEP = 50;
//: windows of frames kept at once (the current one and its neighbours)
const KEPT_WINDOWS = 4;

/** Whether the focused `target` uses `key` itself (a text field; Space on a control outside the viewer). */
function ownKey(target, key, root) {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName)) return true;
  if (target.tagName === "INPUT") return !(key === " " && target.type === "range");
  return key === " " && /^(BUTTON|A|SUMMARY)$/.test(target.tagName) && !root.contains(target);
}

/** A player's clock: "4:07", "1:02:03" (pages.clock_text writes it the same way). */
export function clockText(ms) {
  const seconds = Math.floor(ms / 1000);
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60];
  const pad = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

export class ReplayViewer {
  /**
   * @param root      the viewer's section (macro `viewer` in macros.html), drawn by the server
   * @param load      `step => Promise` of the window of frames that holds `step` ({start, total, frames, …})
   * @param syncUrl   keep the page's address at the step shown (`?step=N`)
   * @param shareUrl  the page's link, which "Copy link at this step" gives with the step
   * @param links     log items are links to their step's page (a record), not buttons (the checker)
   */
  constructor(root, { load, syncUrl = false, shareUrl = window.location.href, links = false } = {}) {
    this.root = root;
    this.load = load;
    this.syncUrl = syncUrl;
    this.shareUrl = shareUrl;
    this.links = links;
    this.windows = new Map(); // window start → its data, least recently used first
    this.window = null;
    this.ready = false;
    this.wanted = null;
    this.wheel = 0;
    this.step = Number(root.dataset.step) || 0;
    this.total = Number(root.dataset.total) || 0;
    this.timer = null;
    this.holder = root.querySelector("[data-board-holder]");
    this.status = root.querySelector("[data-status]");
    this.slider = root.querySelector("[data-slider]");
    this.speed = root.querySelector("[data-speed]");
    this.playButton = root.querySelector("[data-play]");
    this.logPanel = root.querySelector("[data-log-panel]");
    this.list = root.querySelector("[data-log]");
    this.first = Number(root.dataset.first) || 1; // the first action of the log page shown
    this.items = [...this.list.querySelectorAll("[data-step]")];
    this.pageControls = [...root.querySelectorAll("[data-log-page]")];
    this.range = root.querySelector("[data-log-range]");
    this.goButtons = [...root.querySelectorAll("[data-go]")];
    this.counters = Object.fromEntries(
      [...root.querySelectorAll("[data-counter]")].map((node) => [node.dataset.counter, node]),
    );
    for (const button of this.goButtons) button.addEventListener("click", () => this.move(button.dataset.go));
    this.playButton.addEventListener("click", () => this.togglePlay());
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    this.speed.addEventListener("change", () => { if (this.timer) this.play(); });
    this.list.addEventListener("click", (event) => this.onLogClick(event));
    this.list.addEventListener("keydown", (event) => this.onLogKey(event));
    for (const control of this.pageControls) {
      control.addEventListener("click", (event) => {
        if (!this.ready || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault(); // the next page of the log, here (a link or the checker's form: the server's)
        this.pause();
        this.go(Number(control.dataset.target));
      });
    }
    this.holder.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
    document.addEventListener("keydown", (event) => this.onKey(event));
    document.addEventListener("keyup", (event) => {
      // Space on a focused button of the viewer: played or paused on keydown, so no click on keyup
      if (event.key === " " && this.ready && this.root.contains(event.target)
        && event.target instanceof HTMLButtonElement) event.preventDefault();
    });
    const share = root.querySelector("[data-step-share]");
    if (share) this.enableShare(share);
    window.addEventListener("resize", () => this.fitBoard());
    this.fitBoard();
  }

  /** Fetch the window of the step shown and bring the viewer to life; rejects as `load` does. */
  async start() {
    const data = await this.fetchWindow(this.step);
    this.ready = true;
    for (const control of [this.slider, this.speed, this.playButton, ...this.items]) control.disabled = false;
    this.show(this.step, data, { animate: false });
  }

  /** The window of frames that shows `step`: kept, or fetched (and kept). */
  async fetchWindow(step) {
    const kept = this.windowOf(step);
    if (kept) return kept;
    const data = await this.load(step);
    this.windows.set(data.start, data);
    while (this.windows.size > KEPT_WINDOWS) this.windows.delete(this.windows.keys().next().value);
    this.total = data.total;
    this.slider.max = String(this.total);
    return data;
  }

  /** The frame of `step` when a window here has it (else null). */
  frameAt(step) {
    for (const data of [this.window, ...this.windows.values()]) {
      if (data && data.start <= step && step < data.start + data.frames.length) return data.frames[step - data.start];
    }
    return null;
  }

  /** The kept window whose page of the log shows `step` (its first frame, the step before the
   * page, belongs to the page before), else undefined. */
  windowOf(step) {
    const shows = (data) => (step === 0 ? data.start === 0 : data.start < step && step < data.start + data.frames.length);
    return [this.window, ...this.windows.values()].find((data) => data && shows(data));
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
    if (!this.ready) return;
    clearInterval(this.timer);
    if (this.step >= this.total) this.go(0);
    this.timer = setInterval(() => {
      if (this.step >= this.total) this.pause();
      else if (this.wanted === null) this.go(this.step + 1); // (not while a window is on its way)
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
    if (!where || !this.ready || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (ownKey(event.target, event.key, this.root) || this.root.closest("[hidden]")) return;
    event.preventDefault();
    this.move(where);
  }

  onLogClick(event) {
    const item = event.target.closest("[data-step]");
    // without the frames, or with a modifier (a new tab), a link opens its step's page
    if (!item || !this.ready || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey
      || event.altKey) return;
    event.preventDefault();
    this.pause();
    this.go(Number(item.dataset.step));
  }

  onLogKey(event) {
    // in the log, up and down move through the actions, and the focus goes along
    const delta = { ArrowUp: -1, ArrowDown: 1 }[event.key];
    if (!delta || !this.ready) return;
    event.preventDefault();
    event.stopPropagation();
    this.pause();
    this.go(Math.max(1, this.step + delta), { focusLog: true });
  }

  /** The wheel over the board steps (and does not scroll the page): one step per notch. */
  onWheel(event) {
    if (!this.ready || event.ctrlKey) return; // (ctrl+wheel zooms)
    event.preventDefault();
    this.wheel += event.deltaMode === 1 ? event.deltaY * 40 : event.deltaY;
    if (Math.abs(this.wheel) < WHEEL_STEP) return;
    const delta = Math.sign(this.wheel);
    this.wheel = 0;
    this.pause();
    this.go(this.step + delta);
  }

  /** The card that moves between `from` and `to` (highlighted piles) going to `step`. */
  transition(step) {
    if (step === this.step + 1) {
      const frame = this.frameAt(step);
      return frame && frame.from ? { from: frame.from, to: frame.to, card: frame.card } : null;
    }
    if (step === this.step - 1) {
      const frame = this.frameAt(this.step);
      return frame && frame.from ? { from: frame.to, to: frame.from, card: frame.card } : null;
    }
    return null;
  }

  /** Show the position after action `step` (0: the deal), fetching its window when needed. */
  go(step, options = {}) {
    if (!this.ready) return;
    const target = Math.max(0, Math.min(this.total, step));
    const kept = this.windowOf(target);
    if (kept) {
      this.wanted = null;
      this.show(target, kept, options);
      return;
    }
    this.wanted = target;
    this.fetchWindow(target).then((data) => {
      if (this.wanted !== target) return; // a later step was asked for meanwhile
      this.wanted = null;
      this.show(target, data, { ...options, animate: false });
    }, () => {
      this.wanted = null;
      this.pause();
      this.status.textContent = t("load_failed");
    });
  }

  show(target, data, { animate = true, focusLog = false } = {}) {
    const moving = animate && !reducedMotion.matches ? this.transition(target) : null;
    const before = moving ? this.cardRect(moving.from, moving.card) : null;
    const logHadFocus = focusLog || this.items.includes(document.activeElement);
    this.step = target;
    if (data !== this.window) this.useWindow(data);
    const frame = data.frames[target - data.start];
    this.holder.replaceChildren(renderBoard(frame.board));
    this.fitBoard();
    this.highlight(frame);
    if (before) this.glide(before, moving.to, moving.card);
    this.counters.step.textContent = `${target} / ${this.total}`;
    this.counters.score.textContent = String(frame.score);
    this.counters.moves.textContent = String(frame.moves);
    if (this.counters.clock) this.counters.clock.textContent = clockText(target ? frame.time ?? 0 : 0);
    let status = target === 0
      ? t("step_start", { score: frame.score, moves: frame.moves })
      : t("step", { step: target, total: this.total, action: frame.label, score: frame.score, moves: frame.moves });
    if (frame.won) status += ` ${t("step_won")}`;
    this.status.textContent = status;
    this.slider.value = String(target);
    this.slider.setAttribute("aria-valuetext", `${target} / ${this.total}`);
    this.items.forEach((item) => {
      const number = Number(item.dataset.step);
      const current = number === target;
      if (current) item.setAttribute("aria-current", "step");
      else item.removeAttribute("aria-current");
      item.tabIndex = current || (target < this.first && number === this.first) ? 0 : -1;
    });
    const currentItem = this.items[target - this.first];
    if (currentItem) {
      this.scrollLogTo(currentItem);
      if (logHadFocus) currentItem.focus({ preventScroll: true });
    } else if (this.logPanel) {
      this.logPanel.scrollTop = 0;
    }
    this.updateButtons();
    if (this.syncUrl) window.history.replaceState(window.history.state, "", this.stepUrl(target));
    const after = data.next;
    if (after !== null && after !== undefined && data.start + data.frames.length - target < 20) {
      this.fetchWindow(after).catch(() => {}); // the next window, before play reaches it
    }
  }

  /** `base` (the page's address) at `step`: `?step=N`, none at 0. */
  stepUrl(step, base = window.location.href) {
    const url = new URL(base, window.location.href);
    if (step) url.searchParams.set("step", String(step));
    else url.searchParams.delete("step");
    return url.href;
  }

  /** Show the log page of window `data` (its items, the range, the links to its neighbours). */
  useWindow(data) {
    this.window = data;
    const first = data.start + 1; // a window starts at the position before its page's first action
    if (first !== this.first || !this.items.length) {
      this.first = first;
      const items = data.frames.slice(1).map((frame, i) => {
        const number = first + i;
        const attrs = {
          class: "action", "data-step": number, "data-action": frame.action, "data-from": frame.from,
          "data-to": frame.to, "data-card": frame.card, tabindex: -1,
        };
        const node = this.links ? el("a", { ...attrs, href: this.stepUrl(number) })
          : el("button", { ...attrs, type: "button" });
        node.textContent = frame.label;
        return el("li", {}, node);
      });
      const ends = [...this.list.querySelectorAll("[data-log-end]")];
      this.list.replaceChildren(...items, ...ends);
      this.list.start = first;
      this.items = items.map((li) => li.firstChild);
    }
    for (const end of this.list.querySelectorAll("[data-log-end]")) end.hidden = data.next !== null;
    const last = data.start + data.frames.length - 1;
    if (this.range) this.range.textContent = t("log_range", { first, last, total: data.total });
    for (const control of this.pageControls) {
      const target = control.dataset.logPage === "previous" ? data.previous : data.next;
      control.hidden = target === null;
      if (target === null) continue;
      control.dataset.target = String(target);
      if (control instanceof HTMLAnchorElement) control.href = this.stepUrl(target);
      else control.value = String(target);
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

  /** Outline the piles the step's card left and reached, and let the moved card (and what it carried) glow. */
  highlight(frame) {
    if (!frame.from) return;
    this.holder.querySelector(`[data-pile="${frame.from}"]`)?.classList.add("moved-from");
    this.holder.querySelector(`[data-pile="${frame.to}"]`)?.classList.add("moved-to");
    const node = this.findCard(frame.to, frame.card);
    for (let card = node; card; card = card.nextElementSibling) {
      if (card.classList.contains("card")) card.classList.add("moved");
    }
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

  /** On a wide screen the whole board stays above the fold: the room left under its top,
   * which the cards' size and fan and the log's height follow (pages.css, --room). */
  fitBoard() {
    if (!wideLayout.matches) {
      this.root.style.removeProperty("--room");
      return;
    }
    const top = this.holder.getBoundingClientRect().top + window.scrollY;
    const room = Math.max(320, window.innerHeight - top - 12);
    this.root.style.setProperty("--room", `${room}px`);
  }

  /** "Copy link at this step": the page's link with `?step=N`. */
  enableShare(box) {
    const status = box.querySelector("[data-copy-status]");
    box.querySelector("[data-copy-step]").addEventListener("click", async () => {
      try {
        await copy(this.stepUrl(this.step, this.shareUrl));
        status.textContent = t("copied");
      } catch {
        status.textContent = t("copy_failed");
      }
    });
    box.hidden = false;
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
