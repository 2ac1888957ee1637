import mysql from "mysql2/promise";

export const db = mysql.createPool({ host: process.env.DB_HOST, database: "notes" });
