import hashlib
import random
import string

from flask import Flask, make_response

app = Flask(__name__)
DIGEST = "md5"


def make_code(length):
    alphabet = string.ascii_letters + string.digits
    return "".join(random.choice(alphabet) for _ in range(length))


@app.route("/login", methods=["POST"])
def login():
    resp = make_response("welcome")
    resp.set_cookie("remember", make_code(24), secure=True, httponly=True)  # vuln: python.weakrand.security-use
    return resp


@app.route("/theme")
def theme():
    resp = make_response("ok")
    resp.set_cookie("theme", "dark")  # vuln: python.cookie.insecure
    return resp


@app.route("/pin")
def pin():
    resp = make_response("sent")
    code = str(random.randint(100000, 999999))
    resp.set_cookie(key="pending", value=code, secure=True)  # vuln: python.weakrand.security-use
    return resp


def fingerprint(data):
    return hashlib.new(DIGEST, data).hexdigest()  # vuln: python.crypto.weak-hash-new
