import os
import sqlite3

from flask import Flask, request
from flask.views import MethodView

app = Flask(__name__)


def archive(name):
    os.system("tar czf /backups/" + name + ".tgz /srv/" + name)  # vuln: python.cmdi.shell
    return "archived"


class Orders(MethodView):
    def __init__(self):
        self.db = sqlite3.connect("orders.db")

    def get(self, customer):
        cur = self.db.cursor()
        cur.execute(f"SELECT * FROM orders WHERE customer = '{customer}'")  # vuln: python.sqli.string-query
        return str(cur.fetchall())


def clean_names(values):
    for value in values:
        yield value.strip()


@app.route("/touch")
def touch():
    for name in clean_names(request.args.getlist("name")):
        os.system("touch /tmp/" + name)  # vuln: python.cmdi.shell
    if (label := request.args.get("label")) is not None:
        os.system("logger " + label)  # vuln: python.cmdi.shell
    mode = request.args.get("mode") or "fast"
    os.system("sync --" + mode)  # vuln: python.cmdi.shell
    return "ok"


app.add_url_rule("/archive/<name>", "archive", archive)
app.add_url_rule("/orders/<customer>", view_func=Orders.as_view("orders"))
