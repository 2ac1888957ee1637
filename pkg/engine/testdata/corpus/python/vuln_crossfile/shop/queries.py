import sqlite3

from . import views


def open_db():
    return sqlite3.connect(views.DATABASE)


def find_products(term):
    cur = open_db().cursor()
    cur.execute("SELECT id, title FROM products WHERE title LIKE '%" + term + "%'")  # vuln: python.sqli.string-query
    return cur.fetchall()
