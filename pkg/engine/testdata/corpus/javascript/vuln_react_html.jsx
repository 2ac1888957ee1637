import React from "react";

function Preview({ html }) {
  return <section className="preview" dangerouslySetInnerHTML={{ __html: html }} />; // vuln: js.xss.response
}

export default function SearchPage() {
  const term = new URLSearchParams(window.location.search).get("term");
  return (
    <main>
      <h1>Search</h1>
      <Preview html={"<em>" + term + "</em>"} />
    </main>
  );
}
