// safe: js.xss.response
import React from "react";
import DOMPurify from "dompurify";

function Preview({ html }) {
  return <section className="preview" dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(html) }} />;
}

export default function SearchPage() {
  const term = new URLSearchParams(window.location.search).get("term");
  return (
    <main>
      <h1>Search for {term}</h1>
      <Preview html={"<em>" + term + "</em>"} />
    </main>
  );
}
