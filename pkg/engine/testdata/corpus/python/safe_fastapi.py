# safe: python.sqli.string-query python.cmdi.shell python.xss.response python.redirect.open
import html
import shlex
import sqlite3
import subprocess

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

api = FastAPI()


@api.get("/items/{item_id}")
async def read_item(item_id: int, q: str = Query(None)):
    cur = sqlite3.connect("items.db").cursor()
    cur.execute("SELECT * FROM items WHERE id = " + str(int(item_id)))
    return {"q": q}


def lookup(host: str = Query(...)):
    return subprocess.getoutput("dig " + shlex.quote(host))


@api.post("/greet")
async def greet(request: Request):
    form = await request.form()
    return HTMLResponse("<b>" + html.escape(form["name"]) + "</b>")


@api.get("/out")
def out(url: str):
    return RedirectResponse("/home")
