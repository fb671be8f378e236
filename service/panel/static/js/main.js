// The panel: sign in, then pick a project, upload, follow extraction, search.

import { ApiError, api, setCsrfToken } from "./api.js";
import { announce, byId } from "./dom.js";
import { createDocumentView } from "./document_view.js";
import { createDocumentList } from "./documents.js";
import { createImporter } from "./imports.js";
import { createPageView } from "./page_images.js";
import { createProjectPicker } from "./projects.js";
import { createRequestList } from "./requests.js";
import { createSearch } from "./search.js";
import { createUploader } from "./uploads.js";

let currentProjectId = null;

const pageView = createPageView({ dialog: byId("page-view") });
const documentView = createDocumentView({ dialog: byId("document-view") });

const documents = createDocumentList({
  table: byId("documents"),
  body: byId("documents-body"),
  empty: byId("documents-empty"),
  onUpdate: (list, projectId) => uploader.update(list, projectId),
  onView: (doc) => documentView.open(doc),
});

const uploader = createUploader({
  input: byId("file-input"),
  dropzone: byId("dropzone"),
  list: byId("upload-list"),
  getProjectId: () => currentProjectId,
  onRegistered: () => documents.refresh(),
});

createImporter({
  form: byId("import-form"),
  input: byId("import-url"),
  error: byId("import-error"),
  getProjectId: () => currentProjectId,
  onImported: () => documents.refresh(),
});

const requests = createRequestList({
  section: byId("requests-card"),
  list: byId("requests-list"),
  onApproved: () => documents.refresh(),
});

const search = createSearch({
  form: byId("search-form"),
  input: byId("search-query"),
  status: byId("search-status"),
  results: byId("search-results"),
  getProjectId: () => currentProjectId,
  pageView,
});

const projects = createProjectPicker({
  select: byId("project-select"),
  form: byId("new-project-form"),
  input: byId("new-project-name"),
  error: byId("new-project-error"),
  onChange: (project) => {
    currentProjectId = project ? project.id : null;
    search.clear();
    documents.setProject(currentProjectId);
    requests.setProject(currentProjectId);
  },
});

function show(view) {
  byId("loading").hidden = true;
  byId("sign-in").hidden = view !== "sign-in";
  byId("workspace").hidden = view !== "workspace";
  byId("account").hidden = view !== "workspace";
}

function showSignIn() {
  setCsrfToken(null);
  document.body.classList.remove("read-only");
  documents.setProject(null);
  requests.setProject(null);
  show("sign-in");
  byId("token").focus();
}

async function enterWorkspace(session) {
  setCsrfToken(session.csrf_token);
  byId("user-name").textContent = session.user.name;
  // A read-only token sees no control that would only answer token_read_only.
  const readOnly = session.user.scope === "read";
  document.body.classList.toggle("read-only", readOnly);
  byId("read-only-note").hidden = !readOnly;
  show("workspace");
  try {
    await projects.load();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) announce(error.message, "error");
  }
}

byId("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const field = byId("token");
  const error = byId("sign-in-error");
  error.textContent = "";
  const token = field.value.trim();
  if (!token) {
    error.textContent = "Paste your API token.";
    field.focus();
    return;
  }
  try {
    const session = await api("POST", "/api/session", { token });
    field.value = "";
    await enterWorkspace(session);
    byId("main").focus();
  } catch (failure) {
    error.textContent = failure.status === 401 ? "That token is not valid (unknown or revoked)." : failure.message;
    field.focus();
  }
});

byId("sign-out").addEventListener("click", async () => {
  try {
    await api("DELETE", "/api/session");
  } finally {
    showSignIn();
  }
});

document.addEventListener("shortlist:signed-out", () => {
  showSignIn();
  byId("sign-in-error").textContent = "Your session has ended; sign in again.";
});

async function start() {
  try {
    await enterWorkspace(await api("GET", "/api/session"));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) showSignIn();
    else {
      show("sign-in");
      byId("sign-in-error").textContent = error.message;
    }
  }
}

start();
