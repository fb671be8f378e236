// Pages as pictures: a result's passage cropped from its page, and the whole page in a dialog,
// the passage marked. Images come from the API on the panel's own origin (the session cookie
// authorises them), whatever host the service's public URL names.

import { el } from "./dom.js";

/** The API path (with its query) of an address the API gave, on this page's own origin. */
export function localPath(url) {
  const parsed = new URL(url, window.location.href);
  return `${parsed.pathname}${parsed.search}`;
}

/** A page image address with more options (crop=passage, width…). */
export function withOptions(url, options) {
  const parsed = new URL(localPath(url), window.location.href);
  for (const [key, value] of Object.entries(options)) parsed.searchParams.set(key, String(value));
  return `${parsed.pathname}${parsed.search}`;
}

export const CROP_WIDTH = 640;
export const PAGE_WIDTH = 1200;

export function createPageView({ dialog }) {
  const title = dialog.querySelector("#page-view-title");
  const image = dialog.querySelector(".page-view-image");
  const status = dialog.querySelector(".page-view-status");
  dialog.querySelector('[data-action="close"]').addEventListener("click", () => dialog.close());
  image.addEventListener("load", () => status.replaceChildren());
  image.addEventListener("error", () => status.replaceChildren(
    el("p", { class: "error", text: "This page could not be drawn." }),
  ));

  /** Show the page at `url` (a page image address) under `heading`. */
  function open(url, heading, alt) {
    title.textContent = heading;
    status.replaceChildren(el("p", { class: "muted", text: "Drawing the page…" }));
    image.alt = alt;
    image.src = withOptions(url, { width: PAGE_WIDTH });
    if (!dialog.open) dialog.showModal();
  }

  return { open };
}

/** A result's pictures: its passage cropped from the page (a click shows the whole page), and
 * the figure it is or sits beside, with its caption. */
export function resultPicture(result, pageView) {
  if (!result.page_image_url) return null;
  const figure = result.figure ? figurePicture(result, pageView) : null;
  const passage = passagePicture(result, pageView);
  return figure ? el("div", { class: "result-pictures" }, passage, figure) : passage;
}

function figurePicture(result, pageView) {
  const { figure } = result;
  const name = result.document.name;
  const title = figure.label || `Figure on page ${figure.page}`;
  return el(
    "figure",
    { class: "result-figure" },
    el(
      "button",
      {
        type: "button",
        class: "result-picture",
        "aria-label": `Show ${title} of ${name}`,
        onclick: () => pageView.open(figure.image_url, `${name} — ${title}`, figure.caption || title),
      },
      el("img", {
        class: "result-crop",
        src: withOptions(figure.image_url, { width: CROP_WIDTH }),
        alt: figure.caption || title,
        loading: "lazy",
        decoding: "async",
      }),
    ),
    el("figcaption", { class: "muted", text: figure.caption || title }),
  );
}

function passagePicture(result, pageView) {
  const page = result.pages[0];
  const name = result.document.name;
  const crop = el("img", {
    class: "result-crop",
    src: withOptions(result.page_image_url, { crop: "passage", width: CROP_WIDTH }),
    alt: `The passage on page ${page} of ${name}, marked`,
    loading: "lazy",
    decoding: "async",
  });
  return el(
    "button",
    {
      type: "button",
      class: "result-picture",
      "aria-label": `Show page ${page} of ${name} with the passage marked`,
      onclick: () => pageView.open(
        result.page_image_url,
        `${name} — page ${page}`,
        `Page ${page} of ${name}, the passage marked`,
      ),
    },
    crop,
  );
}
