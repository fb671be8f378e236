// Documents assistants asked for (MCP request_document): a short list, each pending one with
// an address field that approves it — the service then imports the address like any import.

import { api, segment } from "./api.js";
import { announce, el } from "./dom.js";

export function createRequestList({ section, list, onApproved }) {
  let projectId = null;

  function row(request) {
    const label = `Address for ${request.title}`;
    const details = [request.reason, request.times_requested > 1 ? `asked ${request.times_requested} times` : ""]
      .filter(Boolean)
      .join(" · ");
    const item = el("li", { class: "request", dataset: { requestId: request.id } },
      el("strong", { text: request.title }),
      details ? el("p", { class: "muted", text: details }) : null);
    if (request.status !== "pending") {
      item.append(el("p", { class: "muted", text: "Approved: imported into the documents below." }));
      return item;
    }
    const input = el("input", {
      type: "url", inputmode: "url", required: true, maxlength: 2048, autocomplete: "off",
      placeholder: "https://example.org/report.pdf", "aria-label": label,
    });
    input.value = request.source_url || "";
    const error = el("p", { class: "error", role: "alert" });
    const form = el("form", { class: "input-with-button writes", novalidate: true },
      input, el("button", { type: "submit", class: "button secondary", text: "Approve" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      const url = input.value.trim();
      if (!url) {
        error.textContent = "Enter the address to import the document from (https://…).";
        return;
      }
      try {
        const approved = await api(
          "POST",
          `/api/projects/${segment(projectId)}/requests/${segment(request.id)}/approve`,
          { url },
        );
        announce(`Importing ${approved.document.name}…`);
        onApproved(approved.document);
        await refresh();
      } catch (problem) {
        error.textContent = problem.message;
      }
    });
    item.append(form, error);
    return item;
  }

  async function refresh() {
    if (!projectId) {
      section.hidden = true;
      list.replaceChildren();
      return;
    }
    const asked = projectId;
    const answer = await api("GET", `/api/projects/${segment(asked)}/requests`);
    if (asked !== projectId) return;
    list.replaceChildren(...answer.requests.map(row));
    section.hidden = answer.requests.length === 0;
  }

  return {
    setProject(id) {
      projectId = id;
      refresh().catch((problem) => announce(problem.message, "error"));
    },
    refresh,
  };
}
