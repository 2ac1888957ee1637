const Koa = require("koa");
const Router = require("@koa/router");

const app = new Koa();
const router = new Router();

router.get("/hello", async (ctx) => {
  const name = ctx.query.name || "guest";
  ctx.body = `<h1>Hello ${name}</h1>`; // vuln: js.xss.response
});

app.use(async (ctx, next) => {
  if (ctx.path === "/go") {
    ctx.redirect(ctx.request.query.to); // vuln: js.redirect.open
    return;
  }
  await next();
});

app.use(router.routes());
app.listen(3000);
