const http = require("http");
const url = require("url");

const server = http.createServer((req, res) => {
  const { query } = url.parse(req.url, true);
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end("<p>You searched for " + query.q + "</p>"); // vuln: js.xss.response
});

server.listen(8080);
