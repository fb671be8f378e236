// Search the current project; each result cites its document and pages, linked to the original.

import { api, segment } from "./api.js";
import { el } from "./dom.js";
import { openOriginal } from "./originals.js";
import { resultPicture } from "./page_images.js";
import { plainText, renderAnswer } from "./passage.js";

export function pageLabel(pages) {
  const [first, last] = pages;
  return first === last ? `page ${first}` : `pages ${first}–${last}`;
}

export function createSearch({ form, input, status, results, getProjectId, pageView }) {
  let asked = 0;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = input.value.trim();
    const projectId = getProjectId();
    if (!query) return;
    if (!projectId) {
      status.replaceChildren(el("p", { class: "muted", text: "Choose or create a project first, then search it." }));
      return;
    }
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
    const passages = `${count} ${count === 1 ? "passage" : "passages"}`;
    let summary = count === 0 ? "No passages match." : passages;
    if (answer.insufficient_evidence && count > 0) {
      summary = `The documents do not seem to answer this. The ${count === 1 ? "closest passage is" : `${count} closest passages are`} shown below, but none is strong evidence.`;
    }
    const lines = [el("p", { class: answer.insufficient_evidence && count > 0 ? "badge warning no-evidence" : null, text: summary })];
    if (count > 0 && answer.ranking === "partly_ranked") {
      // The local reranker had no vectors yet for some passages: they rank by keywords alone.
      const text = `Still warming: results may improve. Partly ranked: ${answer.scored} of ${answer.candidates} passages scored, the rest by keywords only.`;
      lines.push(el("p", { class: "badge warning still-warming", text }));
    } else if (count > 0 && answer.ranking === "bm25_order") {
      const why = answer.reranker === "none"
        ? "Not reranked: reranking is turned off, so passages are in keyword (BM25) order."
        : "Not reranked: the reranker did not answer in time, so passages are in keyword (BM25) order.";
      lines.push(el("p", { class: "badge warning not-reranked", text: why }));
    }
    for (const warning of answer.warnings || []) lines.push(el("p", { class: "hint", text: warning }));
    status.replaceChildren(...lines);
    results.replaceChildren(...answer.results.map((result) => renderResult(result)));
  }

  function renderResult(result) {
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
    const picture = resultPicture(result, pageView);
    return el(
      "li",
      { class: picture ? "result with-picture" : "result" },
      el(
        "div",
        { class: "result-body" },
        el(
          "div",
          { class: "result-head" },
          el("span", { class: "result-document", text: result.document.name }),
          citation,
          relevanceMeter(result),
        ),
        result.heading ? el("p", { class: "result-heading", text: result.heading }) : null,
        ...passage(result),
        copiesNote(result.near_copies || []),
      ),
      picture,
    );
  }

  function passage(result) {
    // The sentences that answer are marked in the passage; one the rendering splits (a table
    // cell, emphasis inside it) is quoted above it instead. Query words are not marked: common
    // ones (how, can, one, per) would light up every passage.
    const { fragment, missed } = renderAnswer(result.text, result.answer_spans || []);
    const quoted = missed.length
      ? el("p", { class: "answer-quote" }, el("mark", { class: "answer", text: missed.map(plainText).join(" ") }))
      : null;
    return [quoted, el("div", { class: "passage" }, fragment)];
  }

  function copiesNote(copies) {
    // Passages with nearly the same text were folded into this one: say where they are.
    if (!copies.length) return null;
    const places = copies.map((copy) => `${copy.document.name} ${pageLabel(copy.pages)}`);
    const count = copies.length === 1 ? "1 near-copy folded" : `${copies.length} near-copies folded`;
    return el("p", { class: "result-copies", text: `${count}: ${places.join("; ")}` });
  }

  function relevanceMeter(result) {
    // The server decides the words (relevance_label); the bar shows the 0-1 value.
    const percent = Math.round(100 * Number(result.relevance));
    const words = { high: "High relevance", medium: "Medium relevance", low: "Low relevance" };
    const label = words[result.relevance_label] || "Relevance";
    return el(
      "span",
      { class: `relevance relevance-${result.relevance_label}`, title: `${label}: ${percent}%` },
      el("meter", { class: "relevance-bar", min: "0", max: "1", value: String(Number(result.relevance)), "aria-label": `${label}: ${percent}%` }),
      el("span", { class: "relevance-words", text: label }),
    );
  }

  function clear() {
    asked += 1;
    results.replaceChildren();
    status.replaceChildren();
  }

  return { clear };
}
