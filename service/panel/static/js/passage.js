// A passage as safe rich text: Markdown rendered by marked, sanitised by DOMPurify against a
// short allow-list, then the sentences that answer (or query words) marked in its text nodes.
//
// Passages are uploaded text: hostile until proven otherwise. Nothing in one may run, load a
// resource or link anywhere, so the allow-list has no <a>, <img>, <iframe>, <style>, no
// attributes but table-cell alignment, and anything else is dropped with its text kept.

import { Marked } from "../vendor/marked/marked.esm.js";
import DOMPurify from "../vendor/dompurify/purify.es.js";
import { markSentences, markWords } from "./highlight.js";

const ALLOWED_TAGS = [
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
  "ul", "ol", "li", "strong", "b", "em", "i", "u", "del", "s", "code", "pre", "sub", "sup",
  "table", "thead", "tbody", "tr", "th", "td",
];
const ALLOWED_ATTR = ["align"];

const markdown = new Marked({ gfm: true, breaks: false, async: false });

/** A fragment holding `text` rendered as sanitised Markdown, with `words` marked. */
export function renderPassage(text, words = []) {
  const fragment = renderMarkdown(text);
  markWords(fragment, words);
  return fragment;
}

/** A fragment holding `text` rendered as sanitised Markdown with the sentences of `spans`
 * ([start, end) offsets into `text`) marked; also the sentences it could not mark in place. */
export function renderAnswer(text, spans = []) {
  const fragment = renderMarkdown(text);
  const sentences = spans.map(([start, end]) => text.slice(start, end));
  return { fragment, missed: markSentences(fragment, sentences) };
}

/** The words a Markdown sentence shows once rendered and sanitised: no markup, no tags. */
export function plainText(text) {
  return renderMarkdown(text).textContent.replace(/\s+/g, " ").trim();
}

function renderMarkdown(text) {
  const html = markdown.parse(text);
  const fragment = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    KEEP_CONTENT: true,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const table of fragment.querySelectorAll("table")) {
    const scroller = document.createElement("div");
    scroller.className = "table-scroll";
    table.replaceWith(scroller);
    scroller.append(table);
  }
  return fragment;
}
