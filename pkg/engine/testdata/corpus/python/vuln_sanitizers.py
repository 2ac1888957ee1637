import os
import sys
import urllib.parse

import bleach
import requests
from flask import Flask, make_response, request

app = Flask(__name__)


@app.route("/bio")
def bio():
    text = bleach.clean(request.form["bio"])
    os.system("echo " + text + " >> /var/log/bios")  # vuln: python.cmdi.shell
    return make_response("<div>" + request.form["bio"] + "</div>")  # vuln: python.xss.response


@app.route("/proxy")
def proxy():
    page = urllib.parse.quote(request.args.get("page", ""))
    return requests.get(request.args["base"] + "/" + page, timeout=3).text  # vuln: python.ssrf.request


def main():
    os.system("backup " + sys.argv[1])  # vuln: python.cmdi.shell


if __name__ == "__main__":
    main()
