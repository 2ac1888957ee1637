import type { Request, Response } from "express";
import { pool } from "./db";

export async function getOrder(req: Request, res: Response): Promise<void> {
  const id: string = req.params.id as string;
  const rows = await pool.query(`SELECT * FROM orders WHERE id = ${id}`); // vuln: js.sqli.string-query
  res.send(`<h1>Order ${id}</h1>`); // vuln: js.xss.response
  res.json(rows);
}
