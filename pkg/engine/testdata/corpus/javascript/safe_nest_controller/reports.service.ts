// safe: js.cmdi.exec
import { Injectable } from "@nestjs/common";
import { execFileSync } from "child_process";

@Injectable()
export class ReportsService {
  export(format: string): string {
    const fmt = format === "csv" ? "csv" : "pdf";
    return execFileSync("report-tool", ["--format", fmt, "/srv/reports/latest"]).toString();
  }
}
