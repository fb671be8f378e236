// What a document became: its extracted text page by page, its warnings, and the original at
// any page, so a person can check why something is or isn't found.

import { api, segment } from "./api.js";
import { el } from "./dom.js";
import { openOriginal } from "./originals.js";
import { PAGE_WIDTH } from "./page_images.js";
import { renderPassage } from "./passage.js";

const PICTURED_KINDS = new Set(["pdf", "image"]);

export function createDocumentView({ dialog }) {
  const title = dialog.querySelector("#document-view-title");
  const warnings = dialog.querySelector(".document-view-warnings");
  const pageInput = dialog.querySelector("#document-view-page");
  const pageCount = dialog.querySelector(".document-view-page-count");
  const previous = dialog.querySelector('[data-action="previous"]');
  const next = dialog.querySelector('[data-action="next"]');
  const text = dialog.querySelector(".document-view-text");
  const picture = dialog.querySelector(".document-view-image");
  let current = null; // { doc, page, pages }
  let asked = 0;

  dialog.querySelector('[data-action="close"]').addEventListener("click", () => dialog.close());
  dialog.querySelector('[data-action="open"]').addEventListener("click", () => {
    if (current) openOriginal(current.doc.id, current.page);
  });
  previous.addEventListener("click", () => current && show(current.page - 1));
  next.addEventListener("click", () => current && show(current.page + 1));
  pageInput.addEventListener("change", () => current && show(Number(pageInput.value)));

  async function open(doc, page = 1) {
    current = { doc, page: 1, pages: Math.max(1, doc.page_count || 1) };
    title.textContent = doc.name;
    warnings.replaceChildren(...(doc.warnings || []).map((warning) => el("p", { class: "hint", text: warning })));
    pageInput.max = String(current.pages);
    pageCount.textContent = String(current.pages);
    if (!dialog.open) dialog.showModal();
    await show(page);
  }

  async function show(page) {
    if (!current || !Number.isInteger(page)) return;
    const target = Math.min(Math.max(page, 1), current.pages);
    current.page = target;
    pageInput.value = String(target);
    previous.disabled = target <= 1;
    next.disabled = target >= current.pages;
    const ticket = ++asked;
    showPicture(target);
    text.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
    try {
      const answer = await api("GET", `/api/documents/${segment(current.doc.id)}/text?pages=${target}`);
      if (ticket !== asked) return;
      const body = answer.markdown.trim();
      text.replaceChildren(body ? renderPassage(body) : el("p", { class: "muted", text: "No text was extracted from this page." }));
    } catch (error) {
      if (ticket === asked) text.replaceChildren(el("p", { class: "error", text: error.message }));
    }
  }

  function showPicture(page) {
    // PDFs and images have pages to draw: the page beside its extracted text.
    const drawn = PICTURED_KINDS.has(current.doc.kind) && current.doc.status === "ready";
    picture.hidden = !drawn;
    if (!drawn) {
      picture.removeAttribute("src");
      return;
    }
    picture.alt = `Page ${page} of ${current.doc.name}`;
    picture.src = `/api/documents/${segment(current.doc.id)}/pages/${page}/image?width=${PAGE_WIDTH}`;
  }

  return { open };
}
