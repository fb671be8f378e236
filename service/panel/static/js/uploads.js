// Uploads: ask for a grant, send the bytes straight to the blob store with progress,
// register the document, then follow its extraction status from the document list.

import { api } from "./api.js";
import { el } from "./dom.js";
import { extractingText, unsearchableReason } from "./documents.js";

const PARALLEL_UPLOADS = 2;
const TYPES_BY_EXTENSION = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  html: "text/html",
  htm: "text/html",
  xhtml: "application/xhtml+xml",
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  text: "text/plain",
};

/** The file's type as the browser knows it, else guessed from its extension. */
export function contentTypeOf(file) {
  if (file.type) return file.type;
  const extension = file.name.includes(".") ? file.name.split(".").pop().toLowerCase() : "";
  return TYPES_BY_EXTENSION[extension] || "application/octet-stream";
}

export function createUploader({ input, dropzone, list, getProjectId, onRegistered }) {
  const queue = [];
  const itemsByDocument = new Map();
  let active = 0;

  input.addEventListener("change", () => {
    enqueue(input.files);
    input.value = "";
  });

  dropzone.addEventListener("dragenter", (event) => {
    event.preventDefault();
    dropzone.classList.add("dragging");
  });
  dropzone.addEventListener("dragover", (event) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    dropzone.classList.add("dragging");
  });
  dropzone.addEventListener("dragleave", (event) => {
    if (!dropzone.contains(event.relatedTarget)) dropzone.classList.remove("dragging");
  });
  dropzone.addEventListener("drop", (event) => {
    event.preventDefault();
    dropzone.classList.remove("dragging");
    enqueue(event.dataTransfer.files);
  });
  // A file dropped next to the zone must not replace the page with the file.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (event) => {
      if (!dropzone.contains(event.target)) event.preventDefault();
    });
  }

  function enqueue(files) {
    const projectId = getProjectId();
    if (!projectId) {
      for (const file of files) {
        const item = createItem(file, null);
        list.prepend(item.node);
        item.state("Not uploaded: choose or create a project first.", "error");
      }
      return;
    }
    for (const file of files) {
      const item = createItem(file, projectId);
      list.prepend(item.node);
      queue.push({ file, item, projectId });
    }
    pump();
  }

  function pump() {
    while (active < PARALLEL_UPLOADS && queue.length > 0) {
      const job = queue.shift();
      active += 1;
      run(job).finally(() => {
        active -= 1;
        pump();
      });
    }
  }

  async function run({ file, item, projectId }) {
    item.state("Checking…", "working");
    let grant;
    try {
      grant = await api("POST", "/api/uploads", {
        project_id: projectId,
        filename: file.name,
        content_type: contentTypeOf(file),
        size: file.size,
      });
    } catch (error) {
      item.state(`Refused: ${error.message}`, "error");
      return;
    }
    item.state("Uploading…", "working");
    try {
      await send(grant, file, (fraction) => item.progress(fraction));
    } catch (error) {
      item.state(`Upload failed: ${error.message}`, "error");
      return;
    }
    item.progress(1);
    try {
      const doc = await api("POST", "/api/documents", { project_id: projectId, upload_id: grant.upload_id });
      itemsByDocument.set(doc.id, item);
      item.document(doc);
      onRegistered(doc);
    } catch (error) {
      item.state(`Not registered: ${error.message}`, "error");
    }
  }

  /** Follow extraction: called with every fresh document list of a project. */
  function update(documents, projectId) {
    const listed = new Set(documents.map((doc) => doc.id));
    for (const doc of documents) {
      const item = itemsByDocument.get(doc.id);
      if (item) item.document(doc);
    }
    for (const [documentId, item] of itemsByDocument) {
      if (item.projectId === projectId && !listed.has(documentId)) {
        item.state("Deleted", "removed");
        itemsByDocument.delete(documentId);
      }
    }
  }

  return { update };
}

const PART_CONCURRENCY = 3;
const PART_ATTEMPTS = 4;
const RETRYABLE_STATUSES = new Set([0, 408, 429, 500, 502, 503, 504]);

/** Send the bytes as the grant says (form POST, raw PUT, or PUT per part), reporting progress. */
async function send(grant, file, onProgress) {
  if (grant.method === "MULTIPART") return sendParts(grant, file, onProgress);
  let body = file;
  if (grant.method === "POST") {
    body = new FormData();
    for (const [name, value] of Object.entries(grant.fields || {})) body.append(name, value);
    body.append("file", file);
  }
  const headers = grant.method === "PUT" ? grant.headers : {};
  const request = await transfer(grant.method, grant.url, body, headers, (loaded, total) =>
    onProgress(total > 0 ? loaded / total : 0),
  );
  if (request.status < 200 || request.status >= 300) throw new Error(storeErrorMessage(request));
}

/** PUT each part to its own URL, a few at a time; a part that fails for a passing
 * reason (connection lost, 5xx, 429) is sent again on its own. Once a part has failed
 * for good the upload has failed: no further part is started and the ones under way
 * are cancelled. */
async function sendParts(grant, file, onProgress) {
  const loaded = new Map();
  // The bar never moves back: a part sent again shows once it passes its earlier high point.
  let shown = 0;
  const report = () => {
    shown = Math.max(shown, [...loaded.values()].reduce((sum, bytes) => sum + bytes, 0) / file.size);
    onProgress(shown);
  };
  const queue = [...grant.parts];
  const failure = new AbortController();
  async function lane() {
    while (!failure.signal.aborted && queue.length > 0) {
      const part = queue.shift();
      try {
        await sendPart(grant, file, part, failure.signal, (bytes) => {
          loaded.set(part.number, bytes);
          report();
        });
      } catch (error) {
        failure.abort();
        throw error;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(PART_CONCURRENCY, queue.length) }, lane));
}

async function sendPart(grant, file, part, signal, onLoaded) {
  const blob = file.slice(part.offset, part.offset + part.size);
  let wait = 500;
  for (let attempt = 1; ; attempt += 1) {
    let request;
    try {
      request = await transfer("PUT", part.url, blob, grant.headers, (bytes) => onLoaded(bytes), signal);
    } catch (error) {
      request = null;
      if (attempt >= PART_ATTEMPTS || signal.aborted) throw error;
    }
    if (request && request.status >= 200 && request.status < 300) {
      onLoaded(part.size);
      return;
    }
    onLoaded(0);
    if (request && (!RETRYABLE_STATUSES.has(request.status) || attempt >= PART_ATTEMPTS)) {
      throw new Error(`part ${part.number}: ${storeErrorMessage(request)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait *= 2;
  }
}

/** One XMLHttpRequest (fetch cannot report upload progress); resolves with the finished
 * request whatever its status, rejects when the connection fails or ``signal`` aborts. */
function transfer(method, url, body, headers, onLoaded, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) {
      reject(new Error("the upload was cancelled."));
      return;
    }
    const request = new XMLHttpRequest();
    if (signal) signal.addEventListener("abort", () => request.abort(), { once: true });
    request.open(method, url);
    request.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onLoaded(event.loaded, event.total);
    });
    request.addEventListener("load", () => resolve(request));
    request.addEventListener("error", () => reject(new Error("the connection was interrupted; try again.")));
    request.addEventListener("abort", () => reject(new Error("the upload was cancelled.")));
    for (const [name, value] of Object.entries(headers || {})) request.setRequestHeader(name, value);
    request.send(body);
  });
}

/** The blob store's own words: our JSON envelope, or an S3 XML <Message>. */
function storeErrorMessage(request) {
  const text = request.responseText || "";
  try {
    const body = JSON.parse(text);
    if (body && body.message) return body.message;
  } catch {
    const match = /<Message>([^<]*)<\/Message>/.exec(text);
    if (match) return match[1];
  }
  return `the file store answered ${request.status}.`;
}

let itemCount = 0;

function createItem(file, projectId) {
  itemCount += 1;
  const statusId = `upload-status-${itemCount}`;
  const bar = el("progress", { max: "1", value: "0", "aria-label": `Upload of ${file.name}`, "aria-describedby": statusId });
  const status = el("span", { class: "upload-status", id: statusId, text: "Waiting…" });
  const node = el(
    "li",
    { class: "upload-item", dataset: { state: "waiting", fileName: file.name } },
    el("span", { class: "upload-name", text: file.name }),
    bar,
    status,
  );
  return {
    node,
    projectId,
    progress(fraction) {
      bar.value = Math.min(1, Math.max(0, fraction));
    },
    state(text, state) {
      status.textContent = text;
      node.dataset.state = state;
      if (state === "error" || state === "removed") bar.hidden = true;
    },
    document(doc) {
      node.dataset.documentId = doc.id;
      if (doc.status === "pending") {
        const ahead = doc.queued_ahead ? ` (${doc.queued_ahead} ahead)` : "";
        this.state(`Uploaded, waiting to be extracted${ahead}…`, "working");
      }
      else if (doc.status === "processing") this.state(extractingText(doc), "working");
      else if (doc.searchable) this.state("Ready to search", "done");
      else this.state(`Not searchable: ${unsearchableReason(doc).reason}`, "error");
    },
  };
}
