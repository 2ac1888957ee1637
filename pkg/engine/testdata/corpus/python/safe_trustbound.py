# safe: python.trustbound.session
from flask import Flask, request, session

app = Flask(__name__)
THEMES = ["light", "dark"]


@app.route("/prefs", methods=["POST"])
def save_prefs():
    theme = request.form.get("theme", "light")
    if theme in THEMES:
        session["theme"] = theme
    session["visits"] = int(request.args.get("visits", "0"))
    session["role"] = "reader"
    return "saved"
