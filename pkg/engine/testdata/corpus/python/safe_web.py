# safe: python.xss.response python.path.file-access python.ssrf.request python.redirect.open
import os

import requests
from markupsafe import escape
from flask import Flask, request, redirect, url_for, make_response, send_file, render_template
from werkzeug.utils import secure_filename

app = Flask(__name__)


@app.route("/greet")
def greet():
    name = request.args.get("name")
    return "<p>Hello " + escape(name) + "</p>"


@app.route("/card")
def card():
    return make_response(render_template("card.html", title=request.args.get("title")))


@app.route("/download")
def download():
    name = secure_filename(request.args.get("file"))
    return send_file(os.path.join("/srv/files", name))


@app.route("/report")
def report():
    name = os.path.basename(request.args["name"])
    with open("/srv/reports/" + name) as fh:
        return fh.read()


@app.route("/fetch")
def fetch():
    query = request.args.get("q")
    resp = requests.get("https://api.example.com/search", params={"q": query}, timeout=5)
    return resp.text


@app.route("/login")
def login():
    return redirect(url_for("index"))
