import os
import sqlite3

from flask import Flask, request

app = Flask(__name__)


@app.route("/nested")
def nested():
    name = request.args.get("name")

    def build():
        return "SELECT * FROM users WHERE name = '" + name + "'"

    sqlite3.connect("app.db").execute(build())  # vuln: python.sqli.string-query
    return "ok"


def walk(parts, acc):
    if not parts:
        os.system("mkdir -p " + acc)  # vuln: python.cmdi.shell
        return acc
    return walk(parts[1:], acc + "/" + parts[0])


@app.route("/mkdir")
def mkdir():
    walk(request.args.get("path", "").split("/"), "/srv")
    return "ok"


@app.route("/lambda")
def with_lambda():
    wrap = lambda v: "echo " + v
    os.system(wrap(request.args.get("msg")))  # vuln: python.cmdi.shell
    return "ok"


class Reports:
    class Query:
        def __init__(self, where):
            self.where = where

        def sql(self):
            return "SELECT * FROM reports WHERE " + self.where

    def run(self, where):
        q = Reports.Query(where)
        return sqlite3.connect("app.db").execute(q.sql())  # vuln: python.sqli.string-query


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
        width = raw
    os.system("convert in.png -resize " + width + " out.png")  # vuln: python.cmdi.shell
    return "ok"


@app.route("/error")
def error():
    try:
        raise ValueError(request.args.get("v"))
    except ValueError as exc:
        os.system("logger " + str(exc))  # vuln: python.cmdi.shell
    return "ok"
