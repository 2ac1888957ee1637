function showResults(container) {
  const params = new URLSearchParams(window.location.search);
  const query = params.get("q");
  container.innerHTML = "<p>Results for " + query + "</p>"; // vuln: js.xss.response
}

function continueLogin() {
  const next = new URLSearchParams(location.search).get("next");
  window.location.href = next; // vuln: js.redirect.open
}

window.addEventListener("message", (event) => {
  const banner = document.getElementById("banner");
  banner.innerHTML = event.data.html; // vuln: js.xss.response
});

document.write("<a href='" + document.referrer + "'>back</a>"); // vuln: js.xss.response
showResults(document.getElementById("results"));
continueLogin();
