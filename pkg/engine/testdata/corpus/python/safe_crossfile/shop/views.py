# safe: python.sqli.string-query
from flask import Flask, request

from .queries import find_by_category, find_products

app = Flask(__name__)
DATABASE = "shop.db"


@app.route("/products")
def products():
    term = request.args.get("q", "")
    return {"items": find_products(term)}


@app.route("/category")
def category():
    return {"items": find_by_category(int(request.args.get("id", "0")))}
