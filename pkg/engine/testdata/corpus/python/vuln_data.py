import pickle
import xml.sax

import yaml
from lxml import etree
from flask import Flask, request

app = Flask(__name__)


@app.route("/session", methods=["POST"])
def session():
    blob = request.get_data()
    state = pickle.loads(blob)  # vuln: python.deser.pickle
    return str(state)


def load_config(text):
    return yaml.load(text, Loader=yaml.Loader)  # vuln: python.deser.yaml-load


def parse(doc):
    parser = etree.XMLParser(resolve_entities=True)  # vuln: python.xxe.resolve-entities
    return etree.fromstring(doc, parser)


def sax_parse(stream, handler):
    p = xml.sax.make_parser()
    p.setFeature(xml.sax.handler.feature_external_ges, True)  # vuln: python.xxe.sax-external
    p.setContentHandler(handler)
    p.parse(stream)
