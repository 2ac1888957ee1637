from flask import Flask, request, session

app = Flask(__name__)


@app.route("/prefs", methods=["POST"])
def save_prefs():
    theme = request.form.get("theme", "light")
    session["theme"] = theme  # vuln: python.trustbound.session
    session["role"] = request.args["role"]  # vuln: python.trustbound.session
    return "saved"
