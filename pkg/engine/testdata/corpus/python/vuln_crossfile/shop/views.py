from flask import Flask, request

from .queries import find_products

app = Flask(__name__)
DATABASE = "shop.db"


@app.route("/products")
def products():
    term = request.args.get("q", "")
    return {"items": find_products(term)}
