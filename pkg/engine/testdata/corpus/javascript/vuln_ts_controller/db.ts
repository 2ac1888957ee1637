import { Pool } from "pg";

export const pool = new Pool({ max: 10 });

export async function countBy(column: string, value: string): Promise<number> {
  const result = await pool.query(`SELECT count(*) AS n FROM accounts WHERE ${column} = '${value}'`); // vuln: js.sqli.string-query
  return Number(result.rows[0].n);
}
