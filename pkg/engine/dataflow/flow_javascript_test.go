package dataflow_test

import "testing"

const jsHead = `const express = require("express");
const cp = require("child_process");
const fs = require("fs");
const app = express();
`

func js(code string) []src { return one("server.js", jsHead+code) }

func TestFlowJavaScript(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"query parameter to exec", js(`
app.get("/a", (req, res) => {
  cp.exec("ping " + req.query.host); // want:js.cmdi.exec
});
`)},
		{"constant command", js(`
app.get("/a", (req, res) => {
  cp.exec("ping localhost");
});
`)},
		{"template literal", js("app.get(\"/a\", (req, res) => {\n  const h = req.query.host;\n  cp.exec(`ping ${h}`); // want:js.cmdi.exec\n});\n")},
		{"destructuring", js(`
app.get("/a", (req, res) => {
  const { host, count } = req.query;
  cp.exec("ping " + host); // want:js.cmdi.exec
});
`)},
		{"number conversion sanitizes", js(`
app.get("/a", (req, res) => {
  const n = parseInt(req.query.n, 10);
  cp.exec("sleep " + n);
});
`)},
		{"reflected in the response", js(`
app.get("/a", (req, res) => {
  res.send("<h1>" + req.query.name + "</h1>"); // want:js.xss.response
});
`)},
		{"json response is not html", js(`
app.get("/a", (req, res) => {
  res.json({ name: req.query.name });
});
`)},
		{"path from a route parameter", js(`
app.get("/f/:name", (req, res) => {
  fs.readFile("/data/" + req.params.name, (err, d) => res.end()); // want:js.path.file-access
});
`)},
		{"basename keeps the path inside the directory", js(`
const path = require("path");
app.get("/f/:name", (req, res) => {
  fs.readFile("/data/" + path.basename(req.params.name), (err, d) => res.end());
});
`)},
		{"named handler function", js(`
function handle(req, res) {
  cp.execSync(req.body.cmd); // want:js.cmdi.exec
}
app.post("/run", handle);
`)},
		{"helper returning its argument", js(`
function wrap(v) { return "echo " + v; }
app.get("/a", (req, res) => {
  cp.exec(wrap(req.query.x)); // want:js.cmdi.exec
  cp.exec(wrap("hello"));
});
`)},
		{"array element", js(`
app.get("/a", (req, res) => {
  const xs = ["ls"];
  xs.push(req.query.c);
  cp.exec(xs[1]); // want:js.cmdi.exec
  cp.exec(xs[0]);
});
`)},
		{"object property", js(`
app.get("/a", (req, res) => {
  const o = { safe: "ls", bad: req.query.c };
  cp.exec(o.bad); // want:js.cmdi.exec
  cp.exec(o.safe);
});
`)},
		{"class field through a method", js(`
class Runner {
  constructor(cmd) { this.cmd = cmd; }
  run() { cp.exec(this.cmd); } // want:js.cmdi.exec
}
app.get("/a", (req, res) => {
  new Runner(req.query.c).run();
});
`)},
		{"dead branch", js(`
app.get("/a", (req, res) => {
  let c = "ls";
  if (1 > 2) { c = req.query.c; }
  cp.exec(c);
});
`)},
		{"loop", js(`
app.get("/a", (req, res) => {
  let c = "ls";
  for (let i = 0; i < 2; i++) {
    cp.exec(c); // want:js.cmdi.exec
    c = req.query.c;
  }
});
`)},
		{"imported helper module", []src{
			{"lib/run.js", `const cp = require("child_process");
function run(c) {
  cp.exec(c); // want:js.cmdi.exec
}
module.exports = { run };
`},
			{"server.js", `const express = require("express");
const { run } = require("./lib/run");
const app = express();
app.get("/a", (req, res) => { run(req.query.c); });
`}}},
	})
}

func TestFlowTypeScript(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"typed express handler", one("server.ts", `import express, { Request, Response } from "express";
import { exec } from "child_process";
const app = express();
app.get("/a", (req: Request, res: Response) => {
  const host: string = req.query.host as string;
  exec("ping " + host); // want:js.cmdi.exec
});
`)},
		{"typed handler with a constant", one("server.ts", `import express, { Request, Response } from "express";
import { exec } from "child_process";
const app = express();
app.get("/a", (req: Request, res: Response) => {
  const host: string = "localhost";
  exec("ping " + host);
});
`)},
	})
}
