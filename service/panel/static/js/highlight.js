// Mark words or sentences in rendered text: text nodes and <mark> elements, never HTML strings.
//
// What to mark is not decided here: the search API gives, for each result, the sentences of its
// passage that best answer the query (answer_spans: offsets into its text), and the words of it
// that matched the query (the same stemming and stopwords BM25 used).

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

function wordPattern(words) {
  const unique = [...new Set(words.filter(Boolean))].sort((a, b) => b.length - a.length);
  if (unique.length === 0) return null;
  // Whole words only; a CJK term stands alone, as its script has no word boundaries.
  const alternatives = unique.map((word) =>
    CJK.test(word) ? escapeRegExp(word) : `(?<![\\p{L}\\p{N}])${escapeRegExp(word)}(?![\\p{L}\\p{N}])`,
  );
  return new RegExp(alternatives.join("|"), "giu");
}

/** Wrap each occurrence of `words` in the text nodes under `root` in <mark>. */
export function markWords(root, words) {
  const pattern = wordPattern(words);
  if (!pattern) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  for (const node of nodes) {
    const text = node.nodeValue;
    const pieces = [];
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      if (match[0].length === 0) continue;
      if (match.index > last) pieces.push(text.slice(last, match.index));
      const mark = document.createElement("mark");
      mark.textContent = match[0];
      pieces.push(mark);
      last = match.index + match[0].length;
    }
    if (pieces.length === 0) continue;
    if (last < text.length) pieces.push(text.slice(last));
    node.replaceWith(...pieces);
  }
}

/** The plain words of a Markdown sentence, as its rendering shows them: emphasis, code and
 * table-cell markers dropped, whitespace collapsed. */
function shownText(markdownText) {
  return markdownText
    .replace(/[*_`~]+/g, "")
    .replace(/^\s*([#>]+|[-+]|\d+[.)])\s+/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Wrap each of `sentences` (Markdown source text) in <mark class="answer"> where the rendered
 * text under `root` shows it within one text node; returns the sentences it could not mark (one
 * that crosses a link, emphasis or table cell), for the caller to show another way. */
export function markSentences(root, sentences) {
  const missed = [];
  for (const sentence of sentences) {
    const wanted = shownText(sentence);
    if (!wanted) continue;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let marked = false;
    for (let node = walker.nextNode(); node && !marked; node = walker.nextNode()) {
      const collapsed = node.nodeValue.replace(/\s+/g, " ");
      const at = collapsed.indexOf(wanted);
      if (at < 0 || collapsed.length !== node.nodeValue.length) {
        if (at < 0) continue;
        // Whitespace differs from the source: mark the node whole when it is only this sentence.
        if (collapsed.trim() !== wanted) continue;
      }
      const start = collapsed.length === node.nodeValue.length ? at : 0;
      const end = collapsed.length === node.nodeValue.length ? at + wanted.length : node.nodeValue.length;
      const text = node.nodeValue;
      const mark = document.createElement("mark");
      mark.className = "answer";
      mark.textContent = text.slice(start, end);
      node.replaceWith(...[text.slice(0, start), mark, text.slice(end)].filter((part) => part !== ""));
      marked = true;
    }
    if (!marked) missed.push(sentence);
  }
  return missed;
}
