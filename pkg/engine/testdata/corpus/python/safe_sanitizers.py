# safe: python.cmdi.shell python.xss.response python.ssrf.request python.path.file-access
import os
import sys
import urllib.parse
import uuid

import bleach
import requests
from flask import Flask, make_response, request

app = Flask(__name__)


@app.route("/bio")
def bio():
    text = bleach.clean(request.form["bio"])
    return make_response("<div>" + text + "</div>")


@app.route("/proxy")
def proxy():
    page = urllib.parse.quote(request.args.get("page", ""))
    return requests.get("https://docs.example.com/" + page, timeout=3).text


@app.route("/avatar")
def avatar():
    key = uuid.UUID(request.args["id"])
    with open("/srv/avatars/" + str(key) + ".png", "rb") as fh:
        return fh.read()


def main():
    os.system("backup --count " + str(len(sys.argv)))


if __name__ == "__main__":
    main()
