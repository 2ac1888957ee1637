import os
import sqlite3

from flask import Flask, request

app = Flask(__name__)
MODE = "raw"


@app.route("/report")
def report():
    kind = request.args.get("kind", "")
    if request.args.get("verbose"):
        column = kind
    else:
        column = "name"
    db = sqlite3.connect("reports.db")
    return str(db.execute("SELECT " + column + " FROM reports").fetchall())  # vuln: python.sqli.string-query


@app.route("/export")
def export():
    target = request.args.get("target", "")
    if MODE == "raw":
        cmd = "tar czf /tmp/out.tgz " + target
    else:
        cmd = "tar czf /tmp/out.tgz /srv/data"
    os.system(cmd)  # vuln: python.cmdi.shell
    return "ok"


@app.route("/sort")
def sort_items():
    order = request.args.get("order", "")
    style = "custom"
    match style:
        case "plain":
            clause = "ORDER BY id"
        case "custom":
            clause = "ORDER BY " + order
        case _:
            clause = ""
    cur = sqlite3.connect("shop.db").cursor()
    cur.execute("SELECT * FROM items " + clause)  # vuln: python.sqli.string-query
    return "sorted"
