import React from "react";

type Profile = { name: string; bio: string };

function Bio({ text }: { text: string }) {
  return <div className="bio" dangerouslySetInnerHTML={{ __html: text }} />; // vuln: js.xss.response
}

export function ProfileCard({ profile }: { profile: Profile }) {
  const fragment = decodeURIComponent(window.location.hash.slice(1));
  return (
    <article>
      <h2>{profile.name}</h2>
      <p>{fragment}</p>
      <Bio text={fragment} />
    </article>
  );
}
