"""End to end against the reference server: events uploaded through the ingestion client are
counted by event segmentation through the reporting client."""
import json
import time
import uuid
from datetime import datetime, timezone

import svc_sdk
from conftest import env

from svc_sdk.generated import ingestion, reporting


def test_uploaded_events_are_counted_by_segmentation(server_urls):
    api_key, secret_key = env("SVC_API_KEY"), env("SVC_SECRET_KEY")
    event_type = "sdk-python-" + uuid.uuid4().hex[:8]
    now = datetime.now(timezone.utc)
    day = now.strftime("%Y%m%d")
    millis = int(now.timestamp() * 1000)

    # The API key is not in the request: the client made by connect() puts it into the body.
    upload = svc_sdk.connect("ingestion", base_url=server_urls["ingest"], api_key=api_key)
    events = [ingestion.EventRecord(user_id="user-%d" % (i % 2), event_type=event_type, time=millis + i) for i in range(3)]
    answer = ingestion.EventIngestionApi(upload).create_batch_events(ingestion.EventUploadRequest(events=events))
    assert isinstance(answer, ingestion.UploadSuccess)
    assert answer.events_ingested == 3

    client = svc_sdk.connect("reporting", base_url=server_urls["app"], api_key=api_key, secret_key=secret_key)
    api = reporting.ReportingApi(client)
    deadline = time.monotonic() + 30
    while True:
        result = api.get_event_segmentation(e=json.dumps({"event_type": event_type}), start=day, end=day, m="totals")
        assert isinstance(result, reporting.EventSegmentationResult)
        totals = sum(sum(series) for series in result.data.series)
        if totals == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.25)  # events reach the store in the background
    assert totals == 3
    assert result.data.x_values == [now.strftime("%Y-%m-%d")]
    uniques = api.get_event_segmentation(e=json.dumps({"event_type": event_type}), start=day, end=day)
    assert sum(sum(series) for series in uniques.data.series) == 2


def test_the_server_refuses_a_wrong_secret_key(server_urls):
    client = svc_sdk.connect("reporting", base_url=server_urls["app"], api_key=env("SVC_API_KEY"), secret_key="not-the-secret")
    try:
        reporting.ReportingApi(client).list_event_type_totals()
    except reporting.ApiException as error:
        assert error.status == 401
    else:
        raise AssertionError("a wrong secret key was accepted")


def test_region_selects_the_groups_server():
    standard = svc_sdk.connect("reporting").configuration.host
    eu = svc_sdk.connect("reporting", region="eu").configuration.host
    assert standard and eu and standard != eu
    try:
        svc_sdk.connect("reporting", region="mars")
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown region was accepted")
