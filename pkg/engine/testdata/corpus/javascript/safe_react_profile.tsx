// safe: js.xss.response
import React from "react";
import DOMPurify from "dompurify";

type Profile = { name: string; bio: string };

function Bio({ text }: { text: string }) {
  return <div className="bio" dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(text) }} />;
}

export function ProfileCard({ profile }: { profile: Profile }) {
  const fragment = window.location.hash.slice(1);
  return (
    <article>
      <h2>{profile.name}</h2>
      <p>{fragment}</p>
      <Bio text={fragment} />
    </article>
  );
}
