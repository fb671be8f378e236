// Small DOM helpers. Data only ever reaches the page as text nodes or attribute values.

/**
 * Create an element. `props`: "class", "text" (textContent), "dataset", "on<event>"
 * listeners, other keys become attributes (true = present, false/null = absent).
 * Children may be nodes or strings (strings become text nodes).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

const SIZE_UNITS = ["bytes", "KB", "MB", "GB"];

export function formatBytes(size) {
  if (typeof size !== "number" || Number.isNaN(size)) return "—";
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${SIZE_UNITS[unit]}`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function formatDate(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "—" : dateFormat.format(date);
}

let noticeTimer = null;

/** Say something in the page's live region; errors stay until the next notice. */
export function announce(message, kind = "info") {
  const notice = byId("notice");
  clearTimeout(noticeTimer);
  notice.className = `notice ${kind}`;
  notice.textContent = message;
  if (kind !== "error") noticeTimer = setTimeout(() => { notice.textContent = ""; notice.className = "notice"; }, 6000);
}
