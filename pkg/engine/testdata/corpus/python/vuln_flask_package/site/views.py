import os

from . import app


@app.route("/ping/<host>")
def ping(host):
    os.system("ping -c 1 " + host)  # vuln: python.cmdi.shell
    return "ok"
