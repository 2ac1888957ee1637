// safe: js.xss.response js.redirect.open
const Koa = require("koa");
const Router = require("@koa/router");
const escapeHtml = require("escape-html");

const app = new Koa();
const router = new Router();

router.get("/hello", async (ctx) => {
  const name = ctx.query.name || "guest";
  ctx.body = `<h1>Hello ${escapeHtml(name)}</h1>`;
});

app.use(async (ctx, next) => {
  if (ctx.path === "/go") {
    const to = ctx.request.query.to;
    ctx.redirect(to === "settings" ? "/settings" : "/home");
    return;
  }
  await next();
});

app.use(router.routes());
app.listen(3000);
