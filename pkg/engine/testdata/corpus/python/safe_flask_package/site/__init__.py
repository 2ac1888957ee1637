# safe: python.cmdi.shell
from flask import Flask

app = Flask(__name__)

from . import views  # noqa: E402
