# safe: python.weakrand.security-use python.cookie.insecure python.crypto.weak-hash-new
import hashlib
import random
import secrets

from flask import Flask, make_response

app = Flask(__name__)
DIGEST = "sha256"


@app.route("/login", methods=["POST"])
def login():
    resp = make_response("welcome")
    resp.set_cookie("remember", secrets.token_urlsafe(24), secure=True, httponly=True)
    return resp


@app.route("/theme")
def theme():
    resp = make_response("ok")
    resp.set_cookie("theme", "dark", secure=True, samesite="Lax")
    return resp


@app.route("/tip")
def tip():
    tips = ["Stretch", "Drink water", "Take a walk"]
    resp = make_response(random.choice(tips))
    resp.set_cookie("seen_tip", "1", secure=True)
    return resp


def fingerprint(data):
    return hashlib.new(DIGEST, data).hexdigest()
