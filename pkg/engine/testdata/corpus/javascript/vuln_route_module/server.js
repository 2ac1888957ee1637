const express = require("express");
const registerFiles = require("./routes/files");

const app = express();
registerFiles(app);
app.listen(8080);
