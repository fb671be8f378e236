// The project picker and the "new project" form. The chosen project is kept in the URL (?project=).

import { api } from "./api.js";
import { el } from "./dom.js";

export function createProjectPicker({ select, form, input, error, onChange }) {
  let projects = [];
  // Projects created while the list is on its way: a list read before they existed must
  // not drop them (nor the choice of them, which the URL already holds).
  let createdSinceListAsked = [];

  function remember(project) {
    if (!projects.some((known) => known.id === project.id)) projects.push(project);
    createdSinceListAsked.push(project);
  }

  function current() {
    return projects.find((project) => project.id === select.value) || null;
  }

  function choose(projectId) {
    select.value = projectId;
    const url = new URL(window.location.href);
    url.searchParams.set("project", projectId);
    window.history.replaceState(null, "", url);
    onChange(current());
  }

  function fill(chosenId) {
    select.replaceChildren(...projects.map((project) => el("option", { value: project.id, text: project.name })));
    const wanted = projects.some((project) => project.id === chosenId) ? chosenId : projects[0] && projects[0].id;
    if (wanted) choose(wanted);
    else onChange(null);
  }

  async function load() {
    createdSinceListAsked = [];
    const body = await api("GET", "/api/projects");
    const listed = new Set(body.projects.map((project) => project.id));
    projects = [...body.projects, ...createdSinceListAsked.filter((project) => !listed.has(project.id))];
    createdSinceListAsked = [];
    fill(new URLSearchParams(window.location.search).get("project"));
  }

  select.addEventListener("change", () => choose(select.value));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const name = input.value.trim();
    if (!name) {
      error.textContent = "Give the project a name.";
      input.focus();
      return;
    }
    try {
      const project = await api("POST", "/api/projects", { name });
      remember(project);
      input.value = "";
      fill(project.id);
      select.focus();
    } catch (failure) {
      error.textContent = failure.message;
      input.focus();
    }
  });

  return { load, current };
}
