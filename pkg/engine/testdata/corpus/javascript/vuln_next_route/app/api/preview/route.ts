import { NextResponse } from "next/server";

export async function GET(request: Request) {
  const { searchParams } = new URL(request.url);
  const source = searchParams.get("source");
  const upstream = await fetch(source); // vuln: js.ssrf.request
  return NextResponse.json({ status: upstream.status });
}
