// The capture page's one script (SPEC §15): receive the page the bookmarklet sends.
//
// The bookmarklet opened this window from the tab being saved and waits for "ready". Only a
// message from that tab (our opener) whose origin is the origin of the URL being saved, about
// that very URL, is taken: another site cannot hand this form a page for someone else's URL.
// The page goes into the form's hidden page_html field and is posted with the form (same
// origin, CSRF token), so saving it is still the person's click.
(function () {
  "use strict";
  var form = document.getElementById("capture-form");
  var field = document.getElementById("id_page_html");
  var status = document.getElementById("page-status");
  if (!form || !field || !status || !window.opener) {
    return;
  }
  var expected = form.getAttribute("data-url") || "";
  var max = Number(form.getAttribute("data-max") || "0");
  var origin;
  try {
    origin = new URL(expected).origin;
  } catch (error) {
    return;
  }
  function say(text) {
    status.textContent = text;
  }
  window.addEventListener("message", function (event) {
    var data = event.data;
    if (event.source !== window.opener || event.origin !== origin) {
      return;
    }
    if (!data || data.tiddly !== "page" || data.url !== expected) {
      return;
    }
    if (typeof data.html === "string" && data.html.length <= max) {
      field.value = data.html;
      say("The page as you see it (" + data.html.length.toLocaleString() +
          " characters) will be saved with the bookmark.");
    } else {
      field.value = "";
      say("The page is too large to send (" + Number(data.too_large || 0).toLocaleString() +
          " bytes; at most " + max.toLocaleString() + "): Tiddly will fetch its URL instead.");
    }
  });
  say("Waiting for the page from the tab that opened this window…");
  window.opener.postMessage("tiddly-capture-ready", origin);
})();
