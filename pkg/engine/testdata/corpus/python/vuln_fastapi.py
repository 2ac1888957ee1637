import sqlite3
import subprocess

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

api = FastAPI()


@api.get("/items/{item_id}")
async def read_item(item_id: str, q: str = Query(None)):
    cur = sqlite3.connect("items.db").cursor()
    cur.execute("SELECT * FROM items WHERE id = " + item_id)  # vuln: python.sqli.string-query
    return {"q": q}


def lookup(host: str = Query(...)):
    return subprocess.getoutput("dig " + host)  # vuln: python.cmdi.shell


@api.post("/greet")
async def greet(request: Request):
    form = await request.form()
    return HTMLResponse("<b>" + form["name"] + "</b>")  # vuln: python.xss.response


@api.get("/out")
def out(url: str):
    return RedirectResponse(url)  # vuln: python.redirect.open
