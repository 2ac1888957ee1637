# safe: python.cmdi.shell python.sqli.string-query
import os
import shlex
import sqlite3

from flask import Flask, request
from flask.views import MethodView

app = Flask(__name__)


def archive(name):
    os.system("tar czf /backups/" + shlex.quote(name) + ".tgz /srv/" + shlex.quote(name))
    return "archived"


class Orders(MethodView):
    def __init__(self):
        self.db = sqlite3.connect("orders.db")

    def get(self, customer):
        cur = self.db.cursor()
        cur.execute("SELECT * FROM orders WHERE customer = ?", (customer,))
        return str(cur.fetchall())


def clean_names(values):
    for value in values:
        yield shlex.quote(value.strip())


@app.route("/touch")
def touch():
    for name in clean_names(request.args.getlist("name")):
        os.system("touch /tmp/" + name)
    if (label := request.args.get("label")) is not None:
        os.system("logger " + str(len(label)))
    mode = "fast" if request.args.get("mode") != "full" else "full"
    os.system("sync --" + mode)
    return "ok"


app.add_url_rule("/archive/<name>", "archive", archive)
app.add_url_rule("/orders/<customer>", view_func=Orders.as_view("orders"))
