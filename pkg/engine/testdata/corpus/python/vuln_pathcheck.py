import os

from flask import Flask, abort, request

app = Flask(__name__)
BASE = "/srv/reports"


@app.route("/report")
def report():
    # the prefix check runs on the raw path: "/srv/reports/../../etc/passwd" passes it
    full = os.path.join(BASE, request.args["name"])
    if not full.startswith(BASE):
        abort(400)
    with open(full) as fh:  # vuln: python.path.file-access
        return fh.read()
