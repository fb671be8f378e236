// Open a document's original file in a new tab, at a page.

import { api, segment } from "./api.js";
import { announce, el } from "./dom.js";

/**
 * The tab is opened at once (while the click still counts as a user gesture, so
 * pop-up blockers allow it), then sent to the short-lived URL once the API gives it.
 */
export async function openOriginal(documentId, page) {
  const tab = window.open("", "_blank");
  try {
    const { url } = await api("GET", `/api/documents/${segment(documentId)}/file`);
    const target = page ? `${url}#page=${page}` : url;
    if (tab) {
      tab.opener = null;
      tab.location.replace(target);
    } else {
      const notice = document.getElementById("notice");
      notice.className = "notice info";
      notice.replaceChildren(
        "Your browser blocked the new tab. ",
        el("a", { href: target, target: "_blank", rel: "noopener noreferrer", text: "Open the file" }),
      );
    }
  } catch (error) {
    if (tab) tab.close();
    announce(error.message, "error");
  }
}
