# safe: python.sqli.string-query
import sqlite3

from . import views


def open_db():
    return sqlite3.connect(views.DATABASE)


def find_products(term):
    cur = open_db().cursor()
    cur.execute("SELECT id, title FROM products WHERE title LIKE ?", ("%" + term + "%",))
    return cur.fetchall()


def find_by_category(category_id):
    cur = open_db().cursor()
    cur.execute("SELECT id, title FROM products WHERE category = %d" % category_id)
    return cur.fetchall()
