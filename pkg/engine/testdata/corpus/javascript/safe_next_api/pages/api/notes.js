// safe: js.sqli.string-query
import { db } from "../../lib/db";

export default async function handler(req, res) {
  const { author } = req.query;
  const notes = await db.query("SELECT * FROM notes WHERE author = ?", [author]);
  res.status(200).json(notes);
}
