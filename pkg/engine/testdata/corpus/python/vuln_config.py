import ssl

import jwt
import requests
from flask import Flask, request
from flask_cors import CORS

app = Flask(__name__)
CORS(app, supports_credentials=True)  # vuln: python.cors.credentials-any-origin

DB_PASSWORD = "Sup3rS3cretPassw0rd"  # vuln: python.secrets.hardcoded-credential
DEBUG = True  # vuln: python.debug.django


def fetch(url):
    return requests.get(url, verify=False)  # vuln: python.tls.verify-disabled


def context():
    return ssl._create_unverified_context()  # vuln: python.tls.unverified-context


def current_user(token):
    return jwt.decode(token, options={"verify_signature": False})  # vuln: python.jwt.unverified


@app.after_request
def cors(resp):
    resp.headers["Access-Control-Allow-Origin"] = request.headers.get("Origin")  # vuln: python.cors.reflect-origin
    return resp


if __name__ == "__main__":
    app.run(host="0.0.0.0", debug=True)  # vuln: python.debug.flask
