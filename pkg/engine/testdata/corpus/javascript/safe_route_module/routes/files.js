// safe: js.path.file-access
const fs = require("fs");
const path = require("path");

module.exports = function registerFiles(app) {
  app.get("/files/:name", (req, res) => {
    const stream = fs.createReadStream(path.join("/srv/shared", path.basename(req.params.name)));
    stream.pipe(res);
  });
};
