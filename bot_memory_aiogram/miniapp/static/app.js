// The memory manager page. Everything it shows comes from the API, which checks who is asking
// on every call; the page only carries Telegram's signed initData and the scope ticket along.
// Text from memories is only ever set as textContent, never as HTML.
"use strict";

(() => {
  const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;
  const launch = new URLSearchParams(location.hash.slice(1));
  // Telegram's script reads the launch parameters from the fragment; without it, so do we.
  const initData =
    (tg && tg.initData) || launch.get("tgWebAppData") || sessionStorage.getItem("bm-init") || "";
  if (initData) sessionStorage.setItem("bm-init", initData);
  const ticket = new URLSearchParams(location.search).get("s") || "";
  const $ = (id) => document.getElementById(id);
  const root = document.documentElement;

  let S = {}; // strings, in the user's language, from the bot's own Fluent files
  let session = null;
  const state = { records: [], query: "", enabled: true, selected: new Set(), busy: false, loads: 0 };
  let backHandler = null;

  // --- Telegram: theme, viewport, back button, haptics ---------------------------------------

  function themeParams() {
    if (tg && tg.themeParams && Object.keys(tg.themeParams).length) return tg.themeParams;
    try {
      return JSON.parse(launch.get("tgWebAppThemeParams") || "{}");
    } catch (_) {
      return {};
    }
  }

  function luminance(hex) {
    const full = hex.length === 4 ? "#" + [...hex.slice(1)].map((c) => c + c).join("") : hex;
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(full.slice(i, i + 2), 16) / 255);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }

  function applyTheme() {
    const theme = themeParams();
    for (const [key, value] of Object.entries(theme)) {
      if (typeof value === "string" && /^#[0-9a-f]{3,8}$/i.test(value)) {
        root.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), value);
      }
    }
    let scheme = tg && tg.colorScheme;
    if (!tg || !tg.themeParams || !Object.keys(tg.themeParams).length) {
      scheme = theme.bg_color
        ? luminance(theme.bg_color) < 0.5 ? "dark" : "light"
        : matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    }
    root.dataset.scheme = scheme || "light";
  }

  function applyViewport() {
    const height = tg && tg.viewportStableHeight ? tg.viewportStableHeight + "px" : "100vh";
    root.style.setProperty("--app-height", height);
  }

  function setBack(handler) {
    backHandler = handler;
    if (tg && tg.BackButton) handler ? tg.BackButton.show() : tg.BackButton.hide();
  }

  function haptic(kind) {
    const h = tg && tg.HapticFeedback;
    if (!h) return;
    if (kind === "selection") h.selectionChanged();
    else h.notificationOccurred(kind);
  }

  // --- the API -----------------------------------------------------------------------------

  class ApiError extends Error {}

  async function api(path, body) {
    const headers = { Authorization: "tma " + initData };
    if (ticket) headers["X-Memory-Scope"] = ticket;
    const options = { method: body === undefined ? "GET" : "POST", headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, options);
    } catch (_) {
      throw new ApiError(S["page-error-busy"] || "Network error");
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(data.message || S["page-error-busy"] || response.status);
    return data;
  }

  // --- drawing -----------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function date(iso) {
    if (!iso) return "";
    try {
      return new Intl.DateTimeFormat(session.language, { dateStyle: "medium" }).format(new Date(iso));
    } catch (_) {
      return iso.slice(0, 10);
    }
  }

  function openLink(event) {
    if (tg && tg.openTelegramLink) {
      event.preventDefault();
      tg.openTelegramLink(event.currentTarget.href);
    }
  }

  function card(record, selectable) {
    const item = el("li", "card");
    item.dataset.id = record.id;
    if (selectable && record.may_forget) {
      const pick = el("label", "pick");
      const box = el("input");
      box.type = "checkbox";
      box.checked = state.selected.has(record.id);
      box.setAttribute("aria-label", S["page-select"] + ": " + record.title);
      box.addEventListener("change", () => {
        box.checked ? state.selected.add(record.id) : state.selected.delete(record.id);
        item.classList.toggle("selected", box.checked);
        haptic("selection");
        drawBar();
      });
      pick.append(box);
      item.append(pick);
      item.classList.toggle("selected", box.checked);
    }
    const body = el("div", "body");
    body.append(el("h3", "title", record.title), el("p", "summary", record.summary));
    const meta = [];
    if (record.speakers.length) meta.push(S["page-speakers"] + ": " + record.speakers.join(", "));
    meta.push(S["page-created"] + " " + date(record.created_at));
    meta.push(S["page-used"] + " " + date(record.last_used_at));
    if (record.until) meta.push(S["page-until"] + " " + date(record.until));
    body.append(el("p", "meta", meta.join(" · ")));
    const badges = el("p", "badges");
    badges.append(
      el("span", "badge" + (record.indexed ? " on" : ""), S[record.indexed ? "page-indexed" : "page-not-indexed"]),
      el("span", "badge", S[record.origin === "note" ? "page-note" : "page-extracted"]),
    );
    body.append(badges);
    if (record.sources.length) {
      const sources = el("p", "sources", S["page-sources"] + ": ");
      for (const source of record.sources) {
        if (source.link) {
          const a = el("a", null, source.id);
          a.href = source.link;
          a.target = "_blank";
          a.rel = "noopener noreferrer";
          a.addEventListener("click", openLink);
          sources.append(a);
        } else {
          sources.append(el("span", null, source.id));
        }
      }
      if (record.more_sources) sources.append(el("span", null, "+" + record.more_sources));
      body.append(sources);
    }
    item.append(body);
    return item;
  }

  function drawBar() {
    const n = state.selected.size;
    $("forget").textContent = S["page-forget-selected"] + (n ? " (" + n + ")" : "");
    $("forget").disabled = n === 0;
  }

  function notice(text, error) {
    const box = $("notice");
    box.textContent = text;
    box.classList.toggle("error", !!error);
    box.hidden = !text;
    if (text) haptic(error ? "error" : "success");
  }

  function fatal(text) {
    $("title").textContent = text;
    $("app").setAttribute("aria-busy", "false");
    for (const id of ["search", "bar", "toggle", "status", "list", "more", "admin"]) $(id).hidden = true;
    haptic("error");
  }

  // An action that changes something runs once at a time (a second press while it runs is
  // dropped); a search or a clear always runs, and the newest list wins (see load).
  async function run(action) {
    if (state.busy) return;
    state.busy = true;
    try {
      await attempt(action);
    } finally {
      state.busy = false;
    }
  }

  async function attempt(action) {
    try {
      await action();
    } catch (error) {
      notice(error instanceof ApiError ? error.message : String(error), true);
    }
  }

  // --- what the page does ------------------------------------------------------------------

  async function load(append) {
    const ticket = ++state.loads;
    const offset = append ? state.records.length : 0;
    const query = state.query ? "&q=" + encodeURIComponent(state.query) : "";
    const data = await api("api/memories?offset=" + offset + query);
    if (ticket !== state.loads) return; // a newer search or clear was asked for meanwhile
    if (!append) {
      state.records = [];
      $("list").replaceChildren();
    }
    state.records.push(...data.records);
    for (const record of data.records) $("list").append(card(record, true));
    const shown = new Set(state.records.map((r) => r.id));
    for (const id of [...state.selected]) if (!shown.has(id)) state.selected.delete(id);
    state.enabled = data.enabled;
    $("status").textContent = data.status;
    $("off").textContent = S["screen-is-off"];
    $("off").hidden = data.enabled;
    $("more").hidden = !data.more;
    const empty = !state.records.length;
    $("empty").hidden = !empty;
    $("empty").textContent = data.message || (state.query ? S["page-no-match"] : S["screen-empty"]);
    $("toggle").textContent = S[data.enabled ? "screen-turn-off" : "screen-turn-on"];
    $("toggle").hidden = !session.may_toggle;
    drawBar();
  }

  async function loadStatus() {
    const data = await api("api/status");
    $("admin-title").textContent = S["page-status"];
    $("spend").textContent = data.spend;
    const jobs = Object.entries(data.jobs).map(([phase, n]) => phase + " " + n);
    $("jobs").textContent = S["page-jobs"] + ": " + (jobs.join(" · ") || "0");
    $("problems").textContent = data.problems;
    $("admin").hidden = false;
  }

  async function search(event) {
    event.preventDefault();
    state.query = $("query").value.trim();
    $("search-clear").hidden = !state.query;
    setBack(state.query ? clearSearch : null);
    await attempt(() => load(false));
  }

  async function clearSearch() {
    $("query").value = "";
    state.query = "";
    $("search-clear").hidden = true;
    setBack(null);
    await attempt(() => load(false));
  }

  async function openPreview() {
    const data = await api("api/preview", { ids: [...state.selected] });
    $("preview-title").textContent = data.message;
    $("preview-list").replaceChildren(...data.records.map((r) => card(r, false)));
    $("preview-hidden").textContent = data.hidden_message || "";
    $("preview-hidden").hidden = !data.hidden;
    $("confirm").hidden = !data.allowed;
    $("preview").hidden = false;
    document.body.classList.add("previewing");
    setBack(closePreview);
    if (!data.allowed) haptic("warning");
    window.scrollTo(0, 0);
  }

  function closePreview() {
    $("preview").hidden = true;
    document.body.classList.remove("previewing");
    setBack(state.query ? clearSearch : null);
  }

  async function confirmForget() {
    const data = await api("api/forget", { ids: [...state.selected] });
    state.selected.clear();
    closePreview();
    await load(false);
    notice(data.message);
  }

  async function toggle() {
    const data = await api("api/switch", { enabled: !state.enabled });
    await load(false);
    notice(data.message);
  }

  async function exportRecords() {
    const data = await api("api/export-link", {});
    const url = new URL(data.url, location.href).href;
    if (tg && tg.downloadFile && tg.isVersionAtLeast && tg.isVersionAtLeast("8.0")) {
      tg.downloadFile({ url, file_name: data.file_name });
    } else {
      const a = el("a");
      a.href = url;
      a.download = data.file_name;
      document.body.append(a);
      a.click();
      a.remove();
    }
    notice(S["page-exported"]);
  }

  function label() {
    document.title = S["page-title"];
    root.lang = session.language;
    $("title").textContent = session.scope.title;
    $("query").placeholder = S["page-search"];
    $("search-go").textContent = S["page-search-button"];
    $("search-clear").textContent = S["page-clear"];
    $("more").textContent = S["page-more"];
    $("confirm").textContent = S["page-confirm"];
    $("cancel").textContent = S["screen-cancel"];
    $("export").textContent = S["page-export"];
    $("search").hidden = false;
    $("bar").hidden = false;
  }

  async function start() {
    applyTheme();
    applyViewport();
    if (tg) {
      tg.ready();
      tg.expand();
      tg.onEvent("themeChanged", applyTheme);
      tg.onEvent("viewportChanged", applyViewport);
      if (tg.BackButton) tg.BackButton.onClick(() => backHandler && backHandler());
    }
    if (!initData) {
      fatal("Open this page from the bot in Telegram. · 请在 Telegram 里从机器人打开此页面。");
      return;
    }
    try {
      session = await api("api/session");
    } catch (error) {
      fatal(error.message);
      return;
    }
    S = session.strings;
    label();
    $("search").addEventListener("submit", search);
    $("search-clear").addEventListener("click", clearSearch);
    $("more").addEventListener("click", () => run(() => load(true)));
    $("forget").addEventListener("click", () => run(openPreview));
    $("confirm").addEventListener("click", () => run(confirmForget));
    $("cancel").addEventListener("click", closePreview);
    $("toggle").addEventListener("click", () => run(toggle));
    $("export").addEventListener("click", () => run(exportRecords));
    await run(() => load(false));
    if (session.admin) await run(loadStatus);
    $("app").setAttribute("aria-busy", "false");
  }

  start();
})();
