// Import a document from a web address: the service checks the address at once and a worker
// fetches it; the document list then follows it like an upload.

import { api, segment } from "./api.js";
import { announce } from "./dom.js";

export function createImporter({ form, input, error, getProjectId, onImported }) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const url = input.value.trim();
    const projectId = getProjectId();
    if (!url) {
      error.textContent = "Enter the address of a document (https://…).";
      return;
    }
    if (!projectId) {
      error.textContent = "Choose or create a project first.";
      return;
    }
    try {
      const document = await api("POST", `/api/projects/${segment(projectId)}/imports`, { url });
      input.value = "";
      announce(`Importing ${document.name}…`);
      onImported(document);
    } catch (problem) {
      error.textContent = problem.message;
    }
  });
}
