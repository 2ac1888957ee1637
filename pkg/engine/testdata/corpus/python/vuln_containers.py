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
    cur.execute("SELECT * FROM users WHERE name = '" + params["name"] + "'")  # vuln: python.sqli.string-query
    return "ok"


@app.route("/clean")
def clean():
    paths = ["/tmp/cache", request.form["dir"]]
    os.system("rm -rf " + paths[1])  # vuln: python.cmdi.shell
    return "ok"


@app.route("/filter")
def filter_rows():
    f = Filter()
    f.field = "status"
    f.value = request.args.get("status")
    cur = sqlite3.connect("app.db").cursor()
    cur.execute("SELECT * FROM orders WHERE status = '%s'" % f.value)  # vuln: python.sqli.string-query
    return "ok"


@app.route("/batch")
def batch():
    names = []
    for n in request.args.getlist("n"):
        names.append(n.strip())
    joined = ",".join(names)
    os.system("archive " + joined)  # vuln: python.cmdi.shell
    upper = [x.upper() for x in names]
    os.system("notify " + upper[0])  # vuln: python.cmdi.shell
    return "ok"


class Query:
    def __init__(self, table, where):
        self.table = table
        self.where = where


@app.route("/query")
def query():
    q = Query("orders", request.args.get("where"))
    cur = sqlite3.connect("app.db").cursor()
    cur.execute("SELECT * FROM " + q.table + " WHERE " + q.where)  # vuln: python.sqli.string-query
    return "ok"
