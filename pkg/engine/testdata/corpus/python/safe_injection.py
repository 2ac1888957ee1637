# safe: python.sqli.string-query python.nosqli.where python.cmdi.shell python.cmdi.subprocess-shell python.ldapi.filter
# safe: python.ssti.template-from-input python.code.eval
import ast
import shlex
import sqlite3
import subprocess

import ldap
from ldap.filter import escape_filter_chars
from flask import Flask, request, render_template
from pymongo import MongoClient

app = Flask(__name__)
db = MongoClient().app


def find_user(conn, name):
    return conn.cursor().execute("SELECT * FROM users WHERE name = ?", (name,))


@app.route("/users")
def users():
    name = request.args.get("name")
    return str(find_user(sqlite3.connect("app.db"), name))


@app.route("/count")
def count():
    limit = int(request.args.get("limit", "10"))
    cur = sqlite3.connect("app.db").cursor()
    cur.execute("SELECT * FROM items LIMIT %d" % limit)
    return "ok"


@app.route("/mongo")
def mongo():
    name = request.args.get("name")
    return str(db.users.find_one({"name": name}))


@app.route("/ping")
def ping():
    host = request.form["host"]
    subprocess.run(["ping", "-c", "1", host], check=True)
    subprocess.check_output("ping -c 1 " + shlex.quote(host), shell=True)
    return "done"


@app.route("/ldap")
def ldap_lookup():
    user = escape_filter_chars(request.args.get("user"))
    conn = ldap.initialize("ldap://directory")
    return str(conn.search_s("dc=example,dc=com", ldap.SCOPE_SUBTREE, "(uid=" + user + ")"))


@app.route("/hello")
def hello():
    name = request.args.get("name", "")
    return render_template("hello.html", name=name)


@app.route("/calc")
def calc():
    return str(ast.literal_eval(request.json["expr"]))
