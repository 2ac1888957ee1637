// safe: js.sqli.string-query
import type { Request, Response } from "express";
import { pool, countBy } from "./db";

export async function show(req: Request, res: Response): Promise<void> {
  const id = parseInt(req.params.id, 10);
  const result = await pool.query("SELECT * FROM accounts WHERE id = " + id);
  res.json(result.rows[0]);
}

export async function count(req: Request, res: Response): Promise<void> {
  const n = await countBy("region", String(req.query.region));
  res.json({ n });
}
