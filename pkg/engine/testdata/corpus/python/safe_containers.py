# safe: python.sqli.string-query python.cmdi.shell
import os
import sqlite3

from flask import Flask, request

app = Flask(__name__)


class Filter:
    field = "id"
    value = None


@app.route("/lookup")
def lookup():
    params = {"name": request.args.get("name"), "table": "users"}
    cur = sqlite3.connect("app.db").cursor()
    cur.execute("SELECT * FROM " + params["table"] + " WHERE name = ?", (params["name"],))
    return "ok"


@app.route("/clean")
def clean():
    paths = ["/tmp/cache", request.form["dir"]]
    os.system("rm -rf " + paths[0])
    return "ok"


@app.route("/filter")
def filter_rows():
    f = Filter()
    f.field = "status"
    f.value = request.args.get("status")
    cur = sqlite3.connect("app.db").cursor()
    cur.execute("SELECT * FROM orders WHERE %s = ?" % f.field, (f.value,))
    return "ok"


@app.route("/batch")
def batch():
    counts = {}
    for n in request.args.getlist("n"):
        counts[n] = len(n)
    total = sum(counts.values())
    os.system("archive --count " + str(int(total)))
    return "ok"


class Query:
    def __init__(self, table, owner):
        self.table = table
        self.owner = owner


@app.route("/query")
def query():
    q = Query("orders", request.args.get("owner"))
    cur = sqlite3.connect("app.db").cursor()
    cur.execute("SELECT * FROM " + q.table + " WHERE owner = ?", (q.owner,))
    return "ok"
