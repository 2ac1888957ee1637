import { Injectable } from "@nestjs/common";
import { execSync } from "child_process";

@Injectable()
export class ReportsService {
  export(format: string): string {
    return execSync(`report-tool --format ${format} /srv/reports/latest`).toString(); // vuln: js.cmdi.exec
  }
}
