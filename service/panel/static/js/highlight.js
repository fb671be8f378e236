// Query terms marked in a passage: text nodes and <mark> elements, never HTML strings.

const WORD = /[\p{L}\p{N}]+/gu;
const SUFFIXES = ["ations", "ation", "ings", "ing", "ies", "es", "ed", "ly", "s"];

/** The words worth marking, crudely stemmed so "tracing" also marks "traces". */
export function queryTerms(query) {
  const terms = new Set();
  for (const word of query.toLowerCase().match(WORD) || []) {
    if (word.length < 3) continue;
    let stem = word;
    for (const suffix of SUFFIXES) {
      if (stem.endsWith(suffix) && stem.length - suffix.length >= 4) {
        stem = stem.slice(0, -suffix.length);
        break;
      }
    }
    terms.add(stem);
  }
  return [...terms].sort((a, b) => b.length - a.length);
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A fragment holding `text` with every word that starts with a query term in <mark>. */
export function highlighted(text, query) {
  const fragment = document.createDocumentFragment();
  const terms = queryTerms(query);
  if (terms.length === 0) {
    fragment.append(text);
    return fragment;
  }
  const pattern = new RegExp(
    `(?<![\\p{L}\\p{N}])(?:${terms.map(escapeRegExp).join("|")})[\\p{L}\\p{N}]*`,
    "giu",
  );
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) fragment.append(text.slice(last, match.index));
    const mark = document.createElement("mark");
    mark.textContent = match[0];
    fragment.append(mark);
    last = match.index + match[0].length;
  }
  if (last < text.length) fragment.append(text.slice(last));
  return fragment;
}
