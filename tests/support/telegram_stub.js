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
      return this;
    },
    setText(text) { this.text = text; return this; },
    show() { this.isVisible = true; calls.push([name + ".show"]); return this; },
    hide() { this.isVisible = false; calls.push([name + ".hide"]); return this; },
    onClick(fn) { window.__telegram[name === "MainButton" ? "main" : "second"] = fn; return this; },
  });
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
