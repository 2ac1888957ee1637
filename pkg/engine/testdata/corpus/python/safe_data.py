# safe: python.deser.pickle python.deser.yaml-load python.xxe.resolve-entities python.xxe.sax-external
import json
import xml.sax

import yaml
from lxml import etree
from flask import Flask, request

app = Flask(__name__)


@app.route("/session", methods=["POST"])
def session():
    state = json.loads(request.get_data())
    return str(state)


def load_config(text):
    return yaml.load(text, Loader=yaml.SafeLoader)


def parse(doc):
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    return etree.fromstring(doc, parser)


def sax_parse(stream, handler):
    p = xml.sax.make_parser()
    p.setFeature(xml.sax.handler.feature_external_ges, False)
    p.setContentHandler(handler)
    p.parse(stream)
