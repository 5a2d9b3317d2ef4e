// sitecrawl's web UI: plain JavaScript over the JSON API (no build step). The token, when
// the server asks for one, is asked once and kept in this tab's sessionStorage.
"use strict";

const KEY = "sitecrawl-token";
const $ = (selector) => document.querySelector(selector);

function headers(extra) {
  const token = sessionStorage.getItem(KEY);
  return Object.assign(token ? { Authorization: "Bearer " + token } : {}, extra || {});
}

async function api(method, path, body) {
  const options = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body) options.body = JSON.stringify(body);
  const response = await fetch(path, options);
  if (response.status === 401) {
    askToken();
    throw new Error("this server needs its token");
  }
  return response;
}

function askToken() {
  $("#token-box").hidden = false;
  $("#token").focus();
}

function number(value) {
  return value === "" ? undefined : Number(value);
}

function list(value) {
  const items = value.split(",").map((item) => item.trim()).filter(Boolean);
  return items.length ? items : undefined;
}

async function start(event) {
  event.preventDefault();
  const form = event.target;
  const body = { url: form.url.value };
  for (const name of ["max_pages", "max_depth", "per_host", "delay"]) {
    const value = number(form[name].value);
    if (value !== undefined) body[name] = value;
  }
  if (form.scope.value) body.scope = form.scope.value;
  for (const name of ["include", "exclude"]) {
    const value = list(form[name].value);
    if (value) body[name] = value;
  }
  if (form.markdown.checked) body.markdown = true;
  if (!form.obey_robots.checked) body.obey_robots = false;
  try {
    const response = await api("POST", "/api/crawls", body);
    const answer = await response.json();
    $("#message").textContent = response.ok ? "" : answer.error;
    if (response.ok) refresh();
  } catch (error) {
    $("#message").textContent = error.message;
  }
}

// Open a file of the API (report, issues, pages) in a new tab: fetched with the token,
// then shown from a blob (a link cannot carry the Authorization header).
async function show(path, name) {
  const tab = window.open("", "_blank");
  const response = await api("GET", path);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  if (name) {
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    if (tab) tab.close();
  } else if (tab) {
    tab.location = url;
  }
}

function button(label, action) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = label;
  element.addEventListener("click", action);
  return element;
}

function cell(row, text, className) {
  const element = row.insertCell();
  element.textContent = text === null || text === undefined ? "" : String(text);
  if (className) element.className = className;
  return element;
}

function render(crawls) {
  const body = $("#crawls tbody");
  body.textContent = "";
  for (const crawl of crawls) {
    const row = body.insertRow();
    row.dataset.id = crawl.id;
    const where = cell(row, crawl.url);
    if (crawl.error) {
      const error = document.createElement("div");
      error.className = "error";
      error.textContent = crawl.error;
      where.append(error);
    }
    cell(row, crawl.status, "status " + crawl.status);
    cell(row, crawl.pages, "num pages");
    cell(row, crawl.queued, "num");
    cell(row, crawl.errors, "num");
    cell(row, (crawl.started || "").replace("T", " ").replace("Z", ""));
    const actions = cell(row, "", "actions");
    const base = "/api/crawls/" + crawl.id;
    if (crawl.status === "running" || crawl.status === "queued") {
      actions.append(button("Pause", () => api("POST", base + "/pause").then(refresh)));
    }
    if (["paused", "failed", "cancelled"].includes(crawl.status)) {
      actions.append(button("Resume", () => api("POST", base + "/resume").then(refresh)));
    }
    if (["running", "queued", "paused"].includes(crawl.status)) {
      actions.append(button("Cancel", () => api("DELETE", base).then(refresh)));
    }
    if (crawl.pages > 0) {
      actions.append(button("Report", () => show(base + "/report")));
      actions.append(button("Issues", () => show(base + "/issues?format=csv", crawl.id + ".issues.csv")));
      actions.append(button("Pages CSV", () => show(base + "/pages?format=csv", crawl.id + ".pages.csv")));
      actions.append(button("JSONL", () => show(base + "/pages", crawl.id + ".pages.jsonl")));
    }
  }
}

let timer = null;
let shown = "";

async function refresh() {
  try {
    const response = await api("GET", "/api/crawls");
    if (!response.ok) return;
    const text = await response.text();
    if (text !== shown) {  // redrawn only when something changed: buttons stay put
      shown = text;
      render(JSON.parse(text));
    }
    $("#state").textContent = "";
  } catch (error) {
    $("#state").textContent = error.message;
  }
}

function poll() {
  if (timer) clearInterval(timer);
  refresh();
  timer = setInterval(refresh, 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  $("#start").addEventListener("submit", start);
  $("#token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("#token").value);
    $("#token").value = "";
    $("#token-box").hidden = true;
    poll();
  });
  poll();
});
