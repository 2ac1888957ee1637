// safe: js.sqli.string-query
import { Pool } from "pg";

export const pool = new Pool({ max: 10 });

const COLUMNS = ["region", "plan"];

export async function countBy(column: string, value: string): Promise<number> {
  if (!COLUMNS.includes(column)) {
    throw new Error("unknown column");
  }
  const result = await pool.query(`SELECT count(*) AS n FROM accounts WHERE ${column} = $1`, [value]);
  return Number(result.rows[0].n);
}
