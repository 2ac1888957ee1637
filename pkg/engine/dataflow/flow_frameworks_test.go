package dataflow_test

import "testing"

// Framework entry points make their handlers' parameters request data;
// the same function outside any registration is not a handler.
func TestFlowFrameworkEntryPoints(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"fastapi path parameter", one("api.py", `from fastapi import FastAPI
import os
app = FastAPI()

@app.get("/run/{cmd}")
def run(cmd: str):
    os.system(cmd)  # want:python.cmdi.shell

def not_a_route(cmd: str):
    os.system(cmd)
`)},
		{"django view registered in urls", []src{
			{"shop/views.py", "import os\n\ndef run(request, cmd):\n    os.system(cmd)  # want:python.cmdi.shell\n\ndef helper(request, cmd):\n    os.system(cmd)\n"},
			{"shop/urls.py", "from django.urls import path\nfrom . import views\n\nurlpatterns = [path('run/<cmd>', views.run)]\n"},
		}},
		{"django view of a module imported by absolute path", []src{
			{"shop/views.py", "import os\n\ndef run(request, cmd):\n    os.system(cmd)  # want:python.cmdi.shell\n\ndef helper(request, cmd):\n    os.system(cmd)\n"},
			{"site/urls.py", "from django.urls import path\nfrom shop import views\n\nurlpatterns = [path('run/<cmd>', views.run)]\n"},
		}},
		{"jax-rs query parameter", one("app/R.java", `package app;
import javax.ws.rs.*;
@Path("/r")
public class R {
  @GET
  public String run(@QueryParam("c") String c) throws Exception {
    Runtime.getRuntime().exec(c); // want:java.cmdi.exec
    return "ok";
  }
  public String helper(String c) throws Exception {
    Runtime.getRuntime().exec(c);
    return "ok";
  }
}
`)},
		{"koa context", one("server.js", `const Koa = require("koa");
const cp = require("child_process");
const app = new Koa();
app.use(async (ctx) => {
  cp.exec(ctx.query.c); // want:js.cmdi.exec
});
function helper(ctx) { cp.exec(ctx.query.c); }
`)},
		{"node http server", one("server.js", `const http = require("http");
const cp = require("child_process");
http.createServer((req, res) => {
  cp.exec(req.url); // want:js.cmdi.exec
}).listen(8080);
`)},
		{"next.js route handler", one("app/api/run/route.ts", `import { exec } from "child_process";
export async function GET(request: Request) {
  const c = new URL(request.url).searchParams.get("c");
  exec(c!); // want:js.cmdi.exec
  return new Response("ok");
}
function helper(request: Request) {
  exec("ls");
}
`)},
		{"gin handler", one("app/h.go", `package app

import (
	"os/exec"

	"github.com/gin-gonic/gin"
)

func run(c *gin.Context) {
	exec.Command("sh", "-c", c.Query("c")).Run() // want:go.cmdi.exec
}

func routes(r *gin.Engine) { r.GET("/run", run) }
`)},
		{"net/http handler registered with HandleFunc", one("app/h.go", `package app

import (
	"net/http"
	"os/exec"
)

func run(w http.ResponseWriter, r *http.Request) {
	exec.Command("sh", "-c", r.URL.Query().Get("c")).Run() // want:go.cmdi.exec
}

func main() { http.HandleFunc("/run", run) }
`)},
		{"laravel route closure", one("routes/web.php", `<?php
use Illuminate\Support\Facades\Route;
use Illuminate\Http\Request;
Route::get('/run', function (Request $request) {
  system($request->input('c')); // want:php.cmdi.shell
});
`)},
		{"sinatra route", one("app.rb", `require "sinatra"
get "/run" do
  system(params[:c]) # want:ruby.cmdi.shell
end
`)},
	})
}
