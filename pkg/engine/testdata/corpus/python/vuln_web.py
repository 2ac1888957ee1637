import requests
from flask import Flask, request, redirect, make_response, send_file
from markupsafe import Markup

app = Flask(__name__)


@app.route("/greet")
def greet():
    name = request.args.get("name")
    return Markup("<p>Hello " + name + "</p>")  # vuln: python.xss.response


@app.route("/card")
def card():
    title = request.args.get("title")
    body = "<div class='card'>{}</div>".format(title)
    return make_response(body)  # vuln: python.xss.response


@app.route("/download")
def download():
    name = request.args.get("file")
    path = "/srv/files/" + name
    return send_file(path)  # vuln: python.path.file-access


def read_report(name):
    with open("/srv/reports/" + name) as fh:  # vuln: python.path.file-access
        return fh.read()


@app.route("/report")
def report():
    return read_report(request.args["name"])


@app.route("/fetch")
def fetch():
    url = request.args.get("url")
    resp = requests.get(url, timeout=5)  # vuln: python.ssrf.request
    return resp.text


@app.route("/login")
def login():
    target = request.args.get("next", "/")
    return redirect(target)  # vuln: python.redirect.open
