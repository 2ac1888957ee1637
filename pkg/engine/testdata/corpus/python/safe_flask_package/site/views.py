# safe: python.cmdi.shell
import ipaddress
import os

from . import app


@app.route("/ping/<host>")
def ping(host):
    os.system("ping -c 1 " + str(ipaddress.ip_address(host)))
    return "ok"
