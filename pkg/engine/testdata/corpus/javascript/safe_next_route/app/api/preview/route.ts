// safe: js.ssrf.request
import { NextResponse } from "next/server";

export async function GET(request: Request) {
  const { searchParams } = new URL(request.url);
  const slug = searchParams.get("slug");
  const upstream = await fetch("https://cms.example.com/pages/" + encodeURIComponent(slug));
  return NextResponse.json({ status: upstream.status });
}
