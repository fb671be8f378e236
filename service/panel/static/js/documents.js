// The document list: status per document, refreshed every 1.5 s while any is being extracted.

import { api, segment } from "./api.js";
import { announce, el, formatBytes, formatDate } from "./dom.js";
import { openOriginal } from "./originals.js";

const POLL_MS = 1500;
const IN_PROGRESS = new Set(["pending", "processing"]);

export function isInProgress(doc) {
  return IN_PROGRESS.has(doc.status);
}

/** Why a finished document cannot be searched, and what to do about it. */
export function unsearchableReason(doc) {
  const reason = (doc.error && doc.error.message) || (doc.warnings || []).join(" ") || "No searchable text was found in this file.";
  const hint = (doc.error && doc.error.hint) || "";
  return { reason, hint };
}

export function createDocumentList({ table, body, empty, onUpdate, onView }) {
  let projectId = null;
  let timer = null;
  let generation = 0;
  const rows = new Map(); // document id -> { row, key }

  function setProject(id) {
    projectId = id;
    generation += 1;
    clearTimeout(timer);
    rows.clear();
    body.replaceChildren();
    table.hidden = true;
    empty.hidden = true;
    if (id) refresh();
  }

  async function refresh() {
    clearTimeout(timer);
    if (!projectId) return;
    const asked = generation;
    let documents;
    try {
      documents = (await api("GET", `/api/projects/${segment(projectId)}/documents`)).documents;
    } catch (error) {
      if (asked !== generation) return;
      if (error.status !== 401) {
        announce(`Could not load the documents: ${error.message}`, "error");
        timer = setTimeout(refresh, POLL_MS * 4);
      }
      return;
    }
    if (asked !== generation) return;
    render(documents);
    onUpdate(documents, projectId);
    if (documents.some(isInProgress) && document.visibilityState !== "hidden") {
      timer = setTimeout(refresh, POLL_MS);
    }
  }

  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && projectId) refresh();
  });

  function render(documents) {
    empty.hidden = documents.length > 0;
    table.hidden = documents.length === 0;
    const sameOrder = documents.length === rows.size && documents.every((doc, index) => body.rows[index] && body.rows[index].dataset.documentId === doc.id);
    const fresh = new Map();
    for (const doc of documents) {
      const key = JSON.stringify(doc);
      const known = rows.get(doc.id);
      if (known && known.key === key) {
        fresh.set(doc.id, known);
        continue;
      }
      const row = buildRow(doc);
      if (sameOrder && known) known.row.replaceWith(row);
      fresh.set(doc.id, { row, key });
    }
    rows.clear();
    for (const [id, entry] of fresh) rows.set(id, entry);
    if (!sameOrder) body.replaceChildren(...[...fresh.values()].map((entry) => entry.row));
  }

  function buildRow(doc) {
    const name = doc.name;
    const warnings = doc.searchable && doc.warnings && doc.warnings.length
      ? el("p", { class: "hint", text: doc.warnings.join(" ") })
      : null;
    return el(
      "tr",
      { dataset: { documentId: doc.id, status: doc.status } },
      el(
        "td",
        { class: "doc-name", dataset: { label: "Name" } },
        el("span", { class: "name", text: name }),
        warnings,
        el("div", { class: "actions" }, ...actionButtons(doc)),
      ),
      el("td", { dataset: { label: "Pages" }, text: doc.page_count == null ? "—" : String(doc.page_count) }),
      el("td", { dataset: { label: "Size" }, text: formatBytes(doc.size_bytes) }),
      el("td", { dataset: { label: "Uploaded" } }, el("time", { datetime: doc.created_at, text: formatDate(doc.created_at) })),
      el("td", { class: "doc-status", dataset: { label: "Status" } }, statusBadge(doc)),
    );
  }

  function actionButtons(doc) {
    return [
      doc.searchable ? el("button", {
        type: "button", class: "button small secondary", text: "View text",
        "aria-label": `View the text of ${doc.name}`,
        onclick: () => onView(doc),
      }) : null,
      doc.has_original ? el("button", {
        type: "button", class: "button small secondary", text: "Open",
        "aria-label": `Open ${doc.name}`,
        onclick: () => openOriginal(doc.id, null),
      }) : null,
      el("button", {
        type: "button", class: "button small secondary writes", text: "Re-extract",
        "aria-label": `Re-extract ${doc.name}`, disabled: isInProgress(doc),
        onclick: () => reextract(doc),
      }),
      el("button", {
        type: "button", class: "button small danger writes", text: "Delete",
        "aria-label": `Delete ${doc.name}`,
        onclick: () => remove(doc),
      }),
    ];
  }

  async function reextract(doc) {
    try {
      await api("POST", `/api/documents/${segment(doc.id)}/reextract`);
      announce(`Extracting ${doc.name} again.`);
    } catch (error) {
      announce(error.message, "error");
    }
    refresh();
  }

  async function remove(doc) {
    if (!window.confirm(`Delete “${doc.name}”? The file and its text are removed; this cannot be undone.`)) return;
    try {
      await api("DELETE", `/api/documents/${segment(doc.id)}`);
      announce(`Deleted ${doc.name}.`);
    } catch (error) {
      announce(error.message, "error");
    }
    refresh();
    document.getElementById("documents-heading").focus();
  }

  return { setProject, refresh };
}

let describedCount = 0;

/** What a document being extracted shows: its pages read so far, once the extractor knows them. */
export function extractingText(doc) {
  const progress = doc.progress;
  if (!progress) return "Extracting…";
  return `Extracting: page ${progress.pages_done} of ${progress.page_count}`;
}

/** The status cell's content: a badge, or "Not searchable" with its reason and a hint. */
export function statusBadge(doc) {
  if (doc.status === "pending") return el("span", { class: "badge pending", text: "Pending" });
  if (doc.status === "processing") return el("span", { class: "badge pending", text: extractingText(doc) });
  if (doc.searchable) return el("span", { class: "badge ready", text: "Ready" });
  const { reason, hint } = unsearchableReason(doc);
  describedCount += 1;
  const detailsId = `not-searchable-${describedCount}`;
  return el(
    "details",
    { class: "not-searchable" },
    el("summary", { class: "badge error", title: reason, "aria-describedby": detailsId }, "Not searchable"),
    el(
      "div",
      { class: "popover", id: detailsId },
      el("p", { class: "reason", text: reason }),
      hint ? el("p", { class: "hint", text: hint }) : null,
    ),
  );
}
