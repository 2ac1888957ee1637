// safe: js.sqli.string-query js.xss.response
import type { Request, Response } from "express";
import { pool } from "./db";

export async function getOrder(req: Request, res: Response): Promise<void> {
  const id: number = parseInt(req.params.id as string, 10);
  const rows = await pool.query("SELECT * FROM orders WHERE id = $1", [id]);
  res.send(`<h1>Order ${id}</h1>`);
  res.json(rows);
}
