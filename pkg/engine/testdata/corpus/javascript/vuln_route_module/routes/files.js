const fs = require("fs");

module.exports = function registerFiles(app) {
  app.get("/files/:name", (req, res) => {
    const stream = fs.createReadStream("/srv/shared/" + req.params.name); // vuln: js.path.file-access
    stream.pipe(res);
  });
};
