// safe: js.cmdi.exec
const { execFile } = require("child_process");
const path = require("path");

function detect(file) {
  return new Promise((resolve, reject) => {
    execFile("file", ["--mime-type", file], (err, stdout) => (err ? reject(err) : resolve(String(stdout))));
  });
}

exports.handler = async (event) => {
  const file = path.basename(event.queryStringParameters.file);
  const type = await detect("/tmp/uploads/" + file);
  return { statusCode: 200, body: JSON.stringify({ type }) };
};
