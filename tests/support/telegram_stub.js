// A stand-in for telegram-web-app.js in the browser tests (there is no Telegram client here):
// Telegram.WebApp from the launch parameters in the URL fragment, as the real script builds
// it, and a record of what the page asked of Telegram (window.__telegram.calls).
(() => {
  const launch = new URLSearchParams(location.hash.slice(1));
  const theme = JSON.parse(launch.get("tgWebAppThemeParams") || "{}");
  const calls = [];
  const bg = theme.bg_color || "#ffffff";
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(bg.slice(i, i + 2), 16) / 255);
  window.__telegram = { calls, back: null, main: null, second: null, confirm: true };
  const button = (name) => ({
    isVisible: false,
    isActive: true,
    text: "",
    color: "",
    setParams(params) {
      if ("text" in params) this.text = params.text;
      if ("color" in params) this.color = params.color;
      calls.push([name + ".setParams", params]);
      draw();
      return this;
    },
    setText(text) { this.text = text; draw(); return this; },
    show() { this.isVisible = true; calls.push([name + ".show"]); draw(); return this; },
    hide() { this.isVisible = false; calls.push([name + ".hide"]); draw(); return this; },
    onClick(fn) { window.__telegram[name === "MainButton" ? "main" : "second"] = fn; return this; },
  });
  // Telegram draws its buttons below the page; the stand-in draws them at the bottom of the
  // viewport, so screenshots show what a user sees.
  function draw() {
    if (!document.body) return;
    const tg = window.Telegram && window.Telegram.WebApp;
    if (!tg) return;
    let bar = document.getElementById("__tg-buttons");
    if (!bar) {
      bar = document.createElement("div");
      bar.id = "__tg-buttons";
      bar.style.cssText =
        "position:fixed;left:0;right:0;bottom:0;display:flex;gap:8px;padding:8px 12px 12px;" +
        "background:" + (theme.bottom_bar_bg_color || theme.secondary_bg_color || bg) + ";z-index:9";
      document.body.append(bar);
    }
    bar.replaceChildren();
    for (const [b, main] of [[tg.SecondaryButton, false], [tg.MainButton, true]]) {
      if (!b.isVisible) continue;
      const node = document.createElement("div");
      node.textContent = b.text;
      node.style.cssText =
        "flex:1;text-align:center;padding:12px;border-radius:10px;font:500 15px system-ui,sans-serif;" +
        "background:" + (main ? b.color || theme.button_color : theme.bg_color || bg) + ";" +
        "color:" + (main ? "#ffffff" : theme.button_color || "#2481cc");
      bar.append(node);
    }
    bar.hidden = !bar.children.length;
    // What Telegram's buttons take from the viewport: the page's own sticky footer sits above.
    const below = bar.hidden ? "" : bar.offsetHeight + "px";
    document.body.style.paddingBottom = below;
    for (const footer of document.querySelectorAll("footer")) footer.style.bottom = below;
  }
  window.Telegram = {
    WebApp: {
      initData: launch.get("tgWebAppData") || "",
      version: launch.get("tgWebAppVersion") || "6.0",
      platform: "tdesktop",
      themeParams: theme,
      colorScheme: 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5 ? "dark" : "light",
      viewportStableHeight: window.innerHeight,
      isVersionAtLeast(v) {
        return parseFloat(this.version) >= parseFloat(v);
      },
      ready: () => calls.push(["ready"]),
      expand: () => calls.push(["expand"]),
      onEvent: (name) => calls.push(["onEvent", name]),
      BackButton: {
        isVisible: false,
        show() { this.isVisible = true; calls.push(["BackButton.show"]); },
        hide() { this.isVisible = false; calls.push(["BackButton.hide"]); },
        onClick(fn) { window.__telegram.back = fn; },
      },
      HapticFeedback: {
        notificationOccurred: (type) => calls.push(["haptic", type]),
        selectionChanged: () => calls.push(["haptic", "selection"]),
        impactOccurred: (style) => calls.push(["haptic", style]),
      },
      MainButton: button("MainButton"),
      SecondaryButton: button("SecondaryButton"),
      showConfirm(message, callback) {
        calls.push(["showConfirm", message]);
        setTimeout(() => callback(window.__telegram.confirm), 0);
      },
      close: () => calls.push(["close"]),
      downloadFile: (params) => calls.push(["downloadFile", params]),
      openTelegramLink: (url) => calls.push(["openTelegramLink", url]),
    },
  };
})();
