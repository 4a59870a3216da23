// What every page script shares: the page's texts (translated on the server), building the
// DOM safely (text only ever goes in through textContent and text nodes, never as markup),
// links that keep the chosen language, and calls to the REST API.

const data = JSON.parse(document.getElementById("page-data").textContent);

/** The page's language: "en", "ko" or "fi". */
export const lang = data.lang;

/** The column lengths a board is drawn for (pages.LONGEST_BUCKETS): its cards fan tighter for each. */
export const longestBuckets = data.longest;

/** The URL of the REST API, e.g. "/api/v1". */
export const api = data.api;

/** A text of the page in its language, its {named} parameters filled in. */
export function t(key, params = {}) {
  const template = data.text[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** A card (such as "TD") in words: "ten of diamonds". */
export function cardName(code) {
  return data.names[code] ?? code;
}

/**
 * A new element: attributes from `attrs` (`class`, `text` for its text, others as given;
 * null, undefined and false leave one out), then the children: nodes, or strings as text.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/** A path of this site (e.g. "/records/3"), with the page's `lang` when it was chosen explicitly. */
export function pageUrl(path) {
  const url = new URL(data.root + path, window.location.href);
  const chosen = new URLSearchParams(window.location.search).get("lang");
  if (chosen) url.searchParams.set("lang", chosen);
  return url.pathname + url.search;
}

/** GET or POST JSON; the error of a failed call carries the problem's `detail` as its message. */
export async function fetchJSON(url, options = {}) {
  const headers = { Accept: "application/json", "Accept-Language": lang, ...(options.headers || {}) };
  const response = await fetch(url, { ...options, headers });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = new Error((body && body.detail) || `${response.status} ${response.statusText}`);
    error.status = response.status;
    error.body = body;
    throw error;
  }
  return body;
}

/** POST a JSON body. */
export function postJSON(url, body) {
  return fetchJSON(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Put `text` on the clipboard: the Clipboard API, or (outside secure contexts) a selected field. */
export async function copy(text) {
  if (navigator.clipboard) return navigator.clipboard.writeText(text);
  const field = el("textarea", { class: "visually-hidden", readonly: true });
  field.value = text;
  document.body.append(field);
  field.select();
  const done = document.execCommand("copy");
  field.remove();
  if (!done) throw new Error("copy refused");
}
