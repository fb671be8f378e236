// Search the current project; each result cites its document and pages, linked to the original.

import { api, segment } from "./api.js";
import { el } from "./dom.js";
import { highlighted } from "./highlight.js";
import { openOriginal } from "./originals.js";

export function pageLabel(pages) {
  const [first, last] = pages;
  return first === last ? `page ${first}` : `pages ${first}–${last}`;
}

export function createSearch({ form, input, status, results, getProjectId }) {
  let asked = 0;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = input.value.trim();
    const projectId = getProjectId();
    if (!query || !projectId) return;
    const ticket = ++asked;
    status.replaceChildren(el("p", { class: "muted", text: "Searching…" }));
    try {
      const answer = await api("POST", `/api/projects/${segment(projectId)}/search`, { query });
      if (ticket === asked) render(answer, query);
    } catch (error) {
      if (ticket !== asked) return;
      results.replaceChildren();
      status.replaceChildren(el("p", { class: "error", text: error.message }));
    }
  });

  function render(answer, query) {
    const count = answer.results.length;
    const lines = [el("p", { text: count === 0 ? "No passages match." : `${count} ${count === 1 ? "passage" : "passages"}` })];
    if (count > 0 && answer.unscored > 0) {
      // The local reranker had no vectors yet for some passages: they rank by keywords alone.
      const text = `Still warming: results may improve. ${answer.unscored} of ${answer.candidates} passages were ranked by keywords only.`;
      lines.push(el("p", { class: "badge warning still-warming", text }));
    } else if (count > 0 && !answer.reranked) {
      const why = answer.reranker === "none"
        ? "Not reranked: reranking is turned off, so passages are in keyword (BM25) order."
        : "Not reranked: the reranker did not answer in time, so passages are in keyword (BM25) order.";
      lines.push(el("p", { class: "badge warning not-reranked", text: why }));
    }
    for (const warning of answer.warnings || []) lines.push(el("p", { class: "hint", text: warning }));
    status.replaceChildren(...lines);
    results.replaceChildren(...answer.results.map((result) => renderResult(result, query)));
  }

  function renderResult(result, query) {
    const first = result.pages[0];
    const citation = el("a", {
      class: "citation",
      href: `#page=${first}`,
      "aria-label": `Open ${result.document.name} at page ${first}`,
      dataset: { documentId: result.document.id, page: String(first) },
      text: pageLabel(result.pages),
      onclick: (event) => {
        event.preventDefault();
        openOriginal(result.document.id, first);
      },
    });
    return el(
      "li",
      { class: "result" },
      el(
        "div",
        { class: "result-head" },
        el("span", { class: "result-document", text: result.document.name }),
        citation,
        el("span", { class: "score", text: `score ${Number(result.score).toFixed(3)}` }),
      ),
      result.heading ? el("p", { class: "result-heading", text: result.heading }) : null,
      el("p", { class: "passage" }, highlighted(result.text, query)),
    );
  }

  function clear() {
    asked += 1;
    results.replaceChildren();
    status.replaceChildren();
  }

  return { clear };
}
