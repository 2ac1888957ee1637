const { exec } = require("child_process");

function detect(path) {
  return new Promise((resolve, reject) => {
    exec("file --mime-type " + path, (err, stdout) => (err ? reject(err) : resolve(String(stdout)))); // vuln: js.cmdi.exec
  });
}

exports.handler = async (event) => {
  const file = event.queryStringParameters.file;
  const type = await detect("/tmp/uploads/" + file);
  return { statusCode: 200, body: JSON.stringify({ type }) };
};
