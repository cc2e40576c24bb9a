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
  const state = {
    records: [],
    query: "",
    enabled: true,
    selected: new Set(),
    busy: false,
    loads: 0,
    view: "list",
    pending: [], // what the preview would forget
    allowed: false,
    shown: null, // the memory whose details are open
    ended: false, // the launch aged out while open
  };
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

  class ApiError extends Error {
    constructor(message, data) {
      super(message);
      this.data = data || {};
    }
  }

  // A call with the login data; an answer other than success throws its message.
  async function send(path, options) {
    let response;
    try {
      response = await fetch(path, options);
    } catch (_) {
      throw new ApiError(S["page-error-busy"] || "Network error");
    }
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      if (session && data.error === "auth_expired") sessionEnded();
      throw new ApiError(data.message || S["page-error-busy"] || String(response.status), data);
    }
    return response;
  }

  async function api(path, body) {
    const headers = { Authorization: "tma " + initData };
    if (ticket) headers["X-Memory-Scope"] = ticket;
    const options = { method: body === undefined ? "GET" : "POST", headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await send(path, options);
    return response.json().catch(() => ({}));
  }

  // --- drawing -----------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // A date in the user's language (CLDR's medium style, as the chat's /memory screen writes
  // it), on one line.
  function date(iso) {
    if (!iso) return "";
    try {
      const text = new Intl.DateTimeFormat(session.language, { dateStyle: "medium" }).format(new Date(iso));
      return text.replace(/ /g, "\u00a0");
    } catch (_) {
      return iso.slice(0, 10);
    }
  }

  // A string the API sent with {name} placeholders (a date the page formats, a memory's
  // text), filled in one pass: a value is never read as a placeholder itself.
  function fill(template, values) {
    return (template || "").replace(/\{(\w+)\}/g, (found, name) =>
      Object.prototype.hasOwnProperty.call(values, name) ? values[name] : found
    );
  }

  // "Label: value" as the user's language writes it (Chinese: a full-width colon).
  function labelled(label, value) {
    return fill(S["page-label"] || "{label}: {value}", { label, value });
  }

  function openLink(event) {
    if (tg && tg.openTelegramLink) {
      event.preventDefault();
      tg.openTelegramLink(event.currentTarget.href);
    }
  }

  const SVG = "http://www.w3.org/2000/svg";

  function icon(path) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    const p = document.createElementNS(SVG, "path");
    p.setAttribute("d", path);
    svg.append(p);
    return svg;
  }
  const LOCK = "M7 10V8a5 5 0 0 1 10 0v2h1v11H6V10h1zm2 0h6V8a3 3 0 0 0-6 0v2z";
  const TRASH = "M9 3h6l1 2h4v2H4V5h4l1-2zm-3 6h12l-1 12H7L6 9zm4 2v8h1.5v-8H10zm3.5 0v8H15v-8h-1.5z";

  function group() {
    return session.scope.kind !== "private";
  }

  // Who said it, by first name ("a member" for a name the bot never saw: never an ID).
  function speakers(record) {
    return record.speakers.map((name) => name || S["screen-someone"]).join(S["page-list-separator"] || ", ");
  }

  function metaLine(record) {
    const parts = [date(record.created_at)];
    if (group() && record.speakers.length) parts.push(speakers(record));
    return parts.join(" · ");
  }

  // A memory a newer one replaced: when, and by what (the newer memory's text when it is on
  // the list, which holds only what this user may read; else "a newer memory").
  function replacedBy(record) {
    const when = date(record.replaced_at);
    const newer = state.records.find((r) => r.id === record.replaced_by);
    if (!newer) return fill(S["page-replaced-by-newer"], { when });
    const text = Array.from(newer.summary || newer.title); // characters, not UTF-16 halves
    const by = text.length > 80 ? text.slice(0, 79).join("") + "…" : text.join("");
    return fill(S["page-replaced-by"], { when, by });
  }

  // One compact row per memory: its text, the date, the speaker in groups; tap for details.
  function card(record, selectable) {
    const item = el("li", "card");
    item.dataset.id = record.id;
    if (selectable && record.may_forget) {
      const pick = el("label", "pick");
      const box = el("input");
      box.type = "checkbox";
      box.checked = state.selected.has(record.id);
      box.setAttribute("aria-label", labelled(S["page-select"], record.title));
      box.addEventListener("change", () => {
        box.checked ? state.selected.add(record.id) : state.selected.delete(record.id);
        item.classList.toggle("selected", box.checked);
        haptic("selection");
        drawBar();
      });
      pick.append(box);
      item.append(pick);
      item.classList.toggle("selected", box.checked);
    } else if (selectable) {
      // Not this user's to forget: a lock where the box would be (the details say why).
      const lock = el("span", "pick lock");
      lock.title = S["page-not-yours"];
      lock.append(icon(LOCK));
      item.append(lock);
    }
    const body = el("div", "body");
    body.append(el("h3", "title", record.title));
    if (record.summary && record.summary !== record.title) {
      body.append(el("p", "summary", record.summary));
    }
    const meta = el("p", "meta", metaLine(record));
    if (record.replaced_by && record.replaced_at) {
      // Still listed until pruned or forgotten, but no longer used: marked, muted.
      item.classList.add("replaced");
      meta.append(el("span", "mark", fill(S["page-replaced-on"], { when: date(record.replaced_at) })));
    }
    body.append(meta);
    item.append(body);
    if (selectable) {
      body.tabIndex = 0;
      body.setAttribute("role", "button");
      body.addEventListener("click", () => openDetails(record));
      body.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          openDetails(record);
        }
      });
      if (record.may_forget) {
        const del = el("button", "delete");
        del.type = "button";
        del.setAttribute("aria-label", labelled(S["page-forget"], record.title));
        del.title = S["page-forget"];
        del.append(icon(TRASH));
        del.addEventListener("click", () => run(() => openPreview([record.id])));
        item.append(del);
      }
    }
    return item;
  }

  function fact(list, label, value) {
    if (!value) return;
    list.append(el("dt", null, label), el("dd", null, value));
  }

  function openDetails(record) {
    if (state.ended) return;
    state.shown = record;
    $("details-title").textContent = record.title;
    $("details-summary").textContent = record.summary;
    $("details-summary").hidden = !record.summary || record.summary === record.title;
    const meta = $("details-meta");
    meta.replaceChildren();
    fact(meta, S["page-created"], date(record.created_at));
    fact(meta, S["page-used"], date(record.last_used_at));
    fact(meta, S["page-until"], record.until ? date(record.until) : "");
    if (record.replaced_by && record.replaced_at) fact(meta, S["page-replaced"], replacedBy(record));
    if (group()) fact(meta, S["page-speakers"], speakers(record));
    $("details-kind").textContent = S[record.origin === "note" ? "page-note" : "page-extracted"];
    const sources = $("details-sources");
    sources.replaceChildren();
    const linked = record.sources.filter((s) => s.link);
    if (linked.length) sources.append(el("span", null, labelled(S["page-sources"], "")));
    linked.forEach((source, n) => {
      const a = el("a", null, S["page-source-link"].replace("{n}", String(n + 1)));
      a.href = source.link;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.addEventListener("click", openLink);
      sources.append(a);
    });
    if (!linked.length) sources.textContent = S["page-sources-unlinked"];
    $("details-why").textContent = S["page-not-yours"];
    $("details-why").hidden = record.may_forget;
    $("details-forget").hidden = !record.may_forget;
    show("details");
    setBack(closeDetails);
    window.scrollTo(0, 0);
  }

  function closeDetails() {
    state.shown = null;
    show("list");
    setBack(state.query ? clearSearch : null);
  }

  // Which part of the page is shown: the list, a memory's details, or the forget preview.
  function show(view) {
    state.view = view;
    document.body.dataset.view = view;
    $("details").hidden = view !== "details";
    $("preview").hidden = view !== "preview";
    drawBar();
  }

  // Telegram's own buttons where the client has them: MainButton for forgetting what is
  // selected (and confirming it), SecondaryButton for Export; else the page's footer.
  const main = tg && tg.MainButton && tg.isVersionAtLeast && tg.isVersionAtLeast("6.1") ? tg.MainButton : null;
  const second =
    tg && tg.SecondaryButton && tg.isVersionAtLeast && tg.isVersionAtLeast("7.10") ? tg.SecondaryButton : null;
  let mainAction = null;

  function drawBar() {
    const n = state.selected.size;
    const counted = (session && session.counted && session.counted["page-forget-n"]) || [];
    $("forget").textContent = n ? counted[n] || S["page-forget"] + " (" + n + ")" : S["page-forget"];
    $("forget").disabled = n === 0 || state.ended;
    $("forget").hidden = !!main;
    const forgettable = state.records.some((r) => r.may_forget);
    $("forget-all").hidden = !forgettable;
    $("export").hidden = !!second;
    $("bar").hidden = state.view !== "list" || (!!main && !!second && !forgettable);
    if (main) {
      const danger = (themeParams().destructive_text_color) || "#e53935";
      if (state.ended) mainAction = null;
      else if (state.view === "list" && n) mainAction = () => run(() => openPreview([...state.selected]));
      else if (state.view === "preview" && state.allowed) mainAction = () => run(confirmForget);
      else mainAction = null;
      if (mainAction) {
        const text = state.view === "preview" ? state.confirm : counted[n] || S["page-forget"];
        main.setParams({ text, color: danger, text_color: "#ffffff", is_visible: true, is_active: true });
        main.show();
      } else {
        main.hide();
      }
    }
    if (second) {
      if (state.view === "list" && !state.ended) {
        second.setParams({ text: S["page-export"], is_visible: true, is_active: true });
        second.show();
      } else {
        second.hide();
      }
    }
  }

  function notice(text, error) {
    const box = $("notice");
    box.textContent = text;
    box.classList.toggle("error", !!error);
    box.hidden = !text;
    if (text) haptic(error ? "error" : "success");
  }

  // A launch that cannot work (expired, forged, opened outside Telegram): a placeholder in the
  // middle of the page and a way out.
  function fatal(text, close) {
    $("title").textContent = "";
    $("title").hidden = true;
    $("placeholder-text").textContent = text;
    $("close").textContent = close || S["page-close"] || "Close · 关闭";
    $("placeholder").hidden = false;
    $("app").classList.add("placeholder");
    $("app").setAttribute("aria-busy", "false");
    for (const id of ["search", "bar", "setting", "status", "list", "more", "admin", "off"]) $(id).hidden = true;
    if (main) main.hide();
    if (second) second.hide();
    setBack(null);
    haptic("error");
  }

  function closeApp() {
    if (tg && tg.close) tg.close();
    else window.close();
  }

  // The launch aged out while the page was open: nothing can change any more; say how to
  // reopen, and keep what is shown readable.
  function sessionEnded() {
    if (state.ended) return;
    state.ended = true;
    $("expired").textContent = S["page-session-ended"];
    $("expired").hidden = false;
    for (const node of document.querySelectorAll("#app button, #app input")) {
      if (node.id !== "close") node.disabled = true;
    }
    $("notice").hidden = true;
    drawBar();
    setBack(null);
    haptic("error");
  }

  function ask(text) {
    if (tg && tg.showConfirm && tg.isVersionAtLeast && tg.isVersionAtLeast("6.2")) {
      return new Promise((done) => tg.showConfirm(text, (ok) => done(!!ok)));
    }
    return Promise.resolve(window.confirm(text));
  }

  // An action that changes something runs once at a time (a second press while it runs is
  // dropped); a search or a clear always runs, and the newest list wins (see load).
  async function run(action) {
    if (state.busy || state.ended) return;
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
      if (state.ended) return;
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
    $("toggle").checked = data.enabled;
    $("setting").hidden = !session.may_toggle;
    drawBar();
  }

  async function loadStatus() {
    const data = await api("api/status");
    $("admin-title").textContent = S["page-status"];
    $("spend").textContent = data.spend;
    $("jobs").textContent = fill(S["page-jobs-line"], { jobs: data.jobs_text });
    $("problems").textContent = data.problems;
    $("admin").hidden = false;
  }

  async function search(event) {
    event.preventDefault();
    if (state.view !== "list") return;
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

  // What forgetting these would take along, from the API, before anything changes.
  async function openPreview(ids) {
    if (!ids.length) return;
    const data = await api("api/preview", { ids });
    const from = state.view === "details" ? "details" : "list";
    state.pending = ids;
    state.allowed = data.allowed;
    // The confirm names how many go, in the user's language (the cascade included).
    const counted = session.counted["page-forget-n"];
    state.confirm = counted[data.records.length + (data.hidden || 0)] || S["page-confirm"];
    $("confirm").textContent = state.confirm;
    $("preview-title").textContent = data.message;
    $("preview-list").replaceChildren(...data.records.map((r) => card(r, false)));
    $("preview-hidden").textContent = data.hidden_message || "";
    $("preview-hidden").hidden = !data.hidden;
    // What a forget would leave (others' words in it): said, listed, not forgotten.
    const left = data.left || [];
    $("preview-left").textContent = data.left_message || "";
    $("preview-left").hidden = !left.length;
    $("preview-left-list").replaceChildren(...left.map((r) => card(r, false)));
    $("confirm").hidden = !data.allowed || !!main;
    show("preview");
    setBack(() => closePreview(from));
    haptic(data.allowed ? "warning" : "error");
    window.scrollTo(0, 0);
  }

  function closePreview(to) {
    state.pending = [];
    state.allowed = false;
    if (to === "details" && state.shown) {
      show("details");
      setBack(closeDetails);
    } else {
      state.shown = null;
      show("list");
      setBack(state.query ? clearSearch : null);
    }
  }

  async function confirmForget() {
    const data = await api("api/forget", { ids: state.pending });
    for (const id of state.pending) state.selected.delete(id);
    closePreview("list");
    await load(false);
    notice(data.message);
  }

  async function toggle() {
    const data = await api("api/switch", { enabled: !state.enabled });
    await load(false);
    notice(data.message);
  }

  async function askToggle(event) {
    event.preventDefault(); // the switch moves once the change is made, not before
    if (state.busy || state.ended) return;
    haptic("selection");
    if (await ask(S[state.enabled ? "page-confirm-off" : "page-confirm-on"])) await run(toggle);
  }

  function forgetAll() {
    const ids = state.records.filter((r) => r.may_forget).map((r) => r.id);
    return openPreview(ids.slice(0, session.max_selection));
  }

  // An export link downloads once. Telegram's downloadFile (8.0) fetches it itself, without
  // our headers: that link alone is the credential (a "bearer" link). Anywhere else the page
  // fetches it with the login data and saves what came, so the link is nothing without them.
  async function exportRecords() {
    const telegram = !!(tg && tg.downloadFile && tg.isVersionAtLeast && tg.isVersionAtLeast("8.0"));
    const data = await api("api/export-link", { bearer: telegram });
    const url = new URL(data.url, location.href).href;
    if (telegram) {
      tg.downloadFile({ url, file_name: data.file_name });
    } else {
      const response = await send(url, { headers: { Authorization: "tma " + initData } });
      const saved = URL.createObjectURL(await response.blob());
      const a = el("a");
      a.href = saved;
      a.download = data.file_name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(saved), 60000); // once the download has it
    }
    notice(S["page-exported"]);
  }

  function label() {
    document.title = S["page-title"];
    root.lang = session.language;
    $("title").textContent = session.scope.title;
    $("setting-label").textContent = S["page-switch"];
    $("query").placeholder = S["page-search"];
    $("search-go").textContent = S["page-search-button"];
    $("search-clear").textContent = S["page-clear"];
    $("more").textContent = S["page-more"];
    $("confirm").textContent = S["page-confirm"];
    $("cancel").textContent = S["screen-cancel"];
    $("details-forget").textContent = S["page-forget"];
    $("details-back").textContent = S["page-back"];
    $("forget-all").textContent = S["page-forget-all"];
    $("export").textContent = S["page-export"];
    $("search").hidden = false;
  }

  async function start() {
    applyTheme();
    applyViewport();
    $("close").addEventListener("click", closeApp);
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
      fatal(error.message, error.data && error.data.close);
      return;
    }
    S = session.strings;
    label();
    if (main) main.onClick(() => mainAction && mainAction());
    if (second) second.onClick(() => run(exportRecords));
    $("search").addEventListener("submit", search);
    $("search-clear").addEventListener("click", clearSearch);
    $("more").addEventListener("click", () => run(() => load(true)));
    $("forget").addEventListener("click", () => run(() => openPreview([...state.selected])));
    $("forget-all").addEventListener("click", () => run(forgetAll));
    $("details-forget").addEventListener("click", () => state.shown && run(() => openPreview([state.shown.id])));
    $("details-back").addEventListener("click", closeDetails);
    $("confirm").addEventListener("click", () => run(confirmForget));
    $("cancel").addEventListener("click", () => closePreview(state.shown ? "details" : "list"));
    $("toggle").addEventListener("click", askToggle);
    $("export").addEventListener("click", () => run(exportRecords));
    show("list");
    await run(() => load(false));
    if (session.admin) await run(loadStatus);
    $("app").setAttribute("aria-busy", "false");
  }

  start();
})();
