// safe: js.cmdi.exec
import express, { Request, Response } from "express";
import { execFile } from "child_process";

interface BackupOptions {
  target: string;
  compress: boolean;
}

class BackupService {
  constructor(private readonly root: string) {}

  run(options: BackupOptions): void {
    const flags = options.compress ? "-az" : "-a";
    execFile("rsync", [flags, this.root, options.target]);
  }
}

const service = new BackupService("/srv/data");
const app = express();

app.post("/backup", (req: Request, res: Response) => {
  const options: BackupOptions = { target: req.body.target as string, compress: true };
  service.run(options);
  res.status(202).end();
});
