# safe: python.path.file-access
import os

from flask import Flask, abort, request

app = Flask(__name__)
BASE = "/srv/reports"


@app.route("/report")
def report():
    full = os.path.realpath(os.path.join(BASE, request.args["name"]))
    if not full.startswith(BASE + os.sep):
        abort(400)
    with open(full) as fh:
        return fh.read()
