# safe: python.cors.credentials-any-origin python.secrets.hardcoded-credential python.debug.django
# safe: python.tls.verify-disabled python.tls.unverified-context python.jwt.unverified
# safe: python.cors.reflect-origin python.debug.flask
import os
import ssl

import jwt
import requests
from flask import Flask, request
from flask_cors import CORS

app = Flask(__name__)
CORS(app, origins=["https://app.example.com"], supports_credentials=True)

DB_PASSWORD = os.environ["DB_PASSWORD"]
DEBUG = os.environ.get("DEBUG") == "1"
ALLOWED = {"https://app.example.com"}


def fetch(url):
    return requests.get(url, verify="/etc/ssl/certs/internal-ca.pem")


def context():
    return ssl.create_default_context()


def current_user(token, key):
    return jwt.decode(token, key, algorithms=["HS256"])


@app.after_request
def cors(resp):
    origin = request.headers.get("Origin")
    if origin in ALLOWED:
        resp.headers["Access-Control-Allow-Origin"] = origin
    return resp


if __name__ == "__main__":
    app.run(host="127.0.0.1", debug=os.environ.get("FLASK_DEBUG") == "1")
