// safe: js.xss.response js.redirect.open
import DOMPurify from "dompurify";

function showResults(container) {
  const params = new URLSearchParams(window.location.search);
  const query = params.get("q");
  container.textContent = "Results for " + query;
}

function continueLogin() {
  const next = new URLSearchParams(location.search).get("next");
  const destination = next === "/orders" ? "/orders" : "/account";
  window.location.href = destination;
}

window.addEventListener("message", (event) => {
  if (event.origin !== "https://app.example.com") {
    return;
  }
  const banner = document.getElementById("banner");
  banner.innerHTML = DOMPurify.sanitize(event.data.html);
});

document.write("<a href='/'>back</a>");
showResults(document.getElementById("results"));
continueLogin();
