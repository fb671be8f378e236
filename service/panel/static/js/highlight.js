// Mark words in rendered text: text nodes and <mark> elements, never HTML strings.
//
// Which words to mark is not decided here: the search API lists, for each result, the words of
// its passage that matched the query (the same stemming and stopwords BM25 used).

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
