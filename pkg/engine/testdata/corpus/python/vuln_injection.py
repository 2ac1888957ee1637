import os
import subprocess
import sqlite3

import ldap
from flask import Flask, request, render_template_string
from pymongo import MongoClient

app = Flask(__name__)
db = MongoClient().app


def find_user(conn, name):
    query = "SELECT * FROM users WHERE name = '%s'" % name
    return conn.cursor().execute(query)  # vuln: python.sqli.string-query


@app.route("/users")
def users():
    name = request.args.get("name")
    return str(find_user(sqlite3.connect("app.db"), name))


@app.route("/search")
def search():
    term = request.args["q"]
    cur = sqlite3.connect("app.db").cursor()
    cur.execute(f"SELECT * FROM items WHERE title LIKE '%{term}%'")  # vuln: python.sqli.string-query
    return "ok"


@app.route("/mongo")
def mongo():
    name = request.args.get("name")
    return str(db.users.find_one({"$where": "this.name == '" + name + "'"}))  # vuln: python.nosqli.where


@app.route("/ping")
def ping():
    host = request.form["host"]
    cmd = "ping -c 1 " + host
    subprocess.check_output(cmd, shell=True)  # vuln: python.cmdi.subprocess-shell
    os.system("nslookup " + host)  # vuln: python.cmdi.shell
    return "done"


@app.route("/ldap")
def ldap_lookup():
    user = request.args.get("user")
    conn = ldap.initialize("ldap://directory")
    filt = "(uid=" + user + ")"
    return str(conn.search_s("dc=example,dc=com", ldap.SCOPE_SUBTREE, filt))  # vuln: python.ldapi.filter


@app.route("/hello")
def hello():
    name = request.args.get("name", "")
    template = "<h1>Hello " + name + "</h1>"
    return render_template_string(template)  # vuln: python.ssti.template-from-input


@app.route("/calc")
def calc():
    expr = request.json["expr"]
    return str(eval(expr))  # vuln: python.code.eval
