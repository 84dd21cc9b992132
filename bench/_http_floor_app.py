"""A do-nothing ingestion endpoint (bench_ingest's HTTP floor): reads the body, answers 201.

Served by the same Granian configuration as ``rldp serve``, it measures what HTTP parsing,
WSGI and Flask alone cost per request on this machine — the ceiling of any Flask service.
"""

from flask import Flask, request

app = Flask(__name__)


@app.post("/v1/reports")
def reports():
    request.get_data()
    return '{"accepted": 0}', 201, {"Content-Type": "application/json"}


@app.get("/readyz")
def ready():
    return "ok"
