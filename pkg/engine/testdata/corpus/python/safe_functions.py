# safe: python.sqli.string-query python.cmdi.shell
import os
import shlex
import sqlite3

from flask import Flask, request

app = Flask(__name__)


@app.route("/nested")
def nested():
    name = request.args.get("name")

    def build():
        return "SELECT * FROM users WHERE name = ?"

    sqlite3.connect("app.db").execute(build(), (name,))
    return "ok"


def depth(parts, n):
    if not parts:
        os.system("logger depth " + str(n))
        return n
    return depth(parts[1:], n + 1)


@app.route("/mkdir")
def mkdir():
    depth(request.args.get("path", "").split("/"), 0)
    return "ok"


@app.route("/lambda")
def with_lambda():
    wrap = lambda v: "echo " + shlex.quote(v)
    os.system(wrap(request.args.get("msg")))
    return "ok"


class Reports:
    class Query:
        def __init__(self, where):
            self.where = where

        def sql(self):
            return "SELECT * FROM reports WHERE owner = ?"

    def run(self, where):
        q = Reports.Query(where)
        return sqlite3.connect("app.db").execute(q.sql(), (q.where,))


@app.route("/reports")
def reports():
    where = request.args.get("where")
    Reports().run(where)
    return "ok"


@app.route("/resize")
def resize():
    raw = request.args.get("width", "")
    try:
        width = str(int(raw))
    except ValueError:
        width = "100"
    os.system("convert in.png -resize " + width + " out.png")
    return "ok"


@app.route("/error")
def error():
    try:
        raise ValueError(request.args.get("v"))
    except ValueError as exc:
        os.system("logger rejected value of " + str(len(exc.args)) + " parts")
    return "ok"
