"""What the templates carry from the specs' extensions, against a fake server: `iter_<operation>`
walks every page of a listing (x-svc-pagination), and a request that may be sent again (GET,
PUT, DELETE, or x-svc-idempotent) is, after 429 or 5xx, waiting Retry-After or a jittered backoff."""
import json

import pytest

import svc_sdk
from svc_sdk.generated import ingestion, reporting, session_replays
from fake_server import FakeServer, full

KEYS = dict(api_key="api-key-0123", secret_key="secret-key-0123")
# The times of an Export API line have a pattern the model checks.
EXPORT_TIMES = {name: "2026-11-20 05:04:03.123000" for name in ("client_event_time", "event_time", "server_received_time", "server_upload_time")}


@pytest.fixture
def serve():
    servers = []

    def start(answer):
        servers.append(FakeServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def connected(group, server, sleeps=None):
    client = svc_sdk.connect(group, base_url=server.url, **KEYS)
    if sleeps is not None:
        client.sleep = sleeps.append
    return client


def replay(replay_id):
    return full(session_replays.SessionReplay, replay_id=replay_id)


def test_iter_follows_next_page_token_page_by_page(serve):
    pages = {None: (["a/1", "a/2"], "p2"), "p2": (["b/1"], "p3"), "p3": ([], None)}

    def answer(request, _):
        ids, token = pages[request["query"].get("page_token")]
        return 200, {"session_replays": [replay(i) for i in ids], "next_page_token": token}, {}

    server = serve(answer)
    api = session_replays.SessionReplaysApi(connected("session-replays", server))
    replays = api.iter_list_session_replays(sort_order="desc")
    assert server.requests == []  # nothing is asked for before the first item
    assert [r.replay_id for r in replays] == ["a/1", "a/2", "b/1"]
    assert [r["query"].get("page_token") for r in server.requests] == [None, "p2", "p3"]
    assert all(r["query"]["sort_order"] == "desc" for r in server.requests)


def test_iter_reads_an_offset_listing_until_a_shorter_page(serve):
    def answer(request, _):
        offset = int(request["query"].get("offset", 0))
        count = 2 if offset < 4 else 1
        events = [full(reporting.ExportedEvent, event_id=offset + i, **EXPORT_TIMES) for i in range(count)]
        return 200, {"userData": full(reporting.UserActivityData), "events": events}, {}

    server = serve(answer)
    api = reporting.ReportingBeyondTheDocumentsApi(connected("reporting", server))
    events = list(api.iter_get_user_activity(510384112467, limit=2))
    assert [e.event_id for e in events] == [0, 1, 2, 3, 4]
    assert [r["query"].get("offset") for r in server.requests] == [None, "2", "4"]


def test_an_idempotent_upload_is_sent_again_after_429_with_retry_after(serve):
    accepted = {"code": 200, "events_ingested": 1, "payload_size_bytes": 80, "server_upload_time": 1}
    server = serve(lambda _r, i: (429, {"code": 429, "error": "slow down"}, {"Retry-After": "2"}) if i == 0 else (200, accepted, {}))
    sleeps = []
    api = ingestion.EventIngestionApi(connected("ingestion", server, sleeps))
    result = api.create_batch_events(ingestion.EventUploadRequest(events=[ingestion.EventRecord(user_id="dana", event_type="Play")]))
    assert result.events_ingested == 1
    assert sleeps == [2.0]
    assert len(server.requests) == 2 and server.requests[0]["body"] == server.requests[1]["body"]
    assert json.loads(server.requests[1]["body"])["api_key"] == KEYS["api_key"]


def test_a_get_is_sent_again_after_5xx_with_a_jittered_backoff_at_most_max_retries_times(serve):
    server = serve(lambda _r, _i: (503, {"code": 503, "error": "storage unavailable"}, {}))
    sleeps = []
    client = connected("session-replays", server, sleeps)
    with pytest.raises(session_replays.ApiException) as raised:
        session_replays.SessionReplaysApi(client).list_session_replays()
    assert raised.value.status == 503
    assert len(server.requests) == 3 and len(sleeps) == 2
    assert 0 <= sleeps[0] < 0.5 and 0 <= sleeps[1] < 1.0


def test_what_is_not_sent_again(serve):
    # A POST without x-svc-idempotent: a group identification is never repeated.
    server = serve(lambda _r, _i: (429, {"code": 429, "error": "slow down"}, {"Retry-After": "1"}))
    sleeps = []
    api = ingestion.GroupIdentificationApi(connected("ingestion", server, sleeps))
    with pytest.raises(ingestion.ApiException) as raised:
        api.create_group_identifications(identification=json.dumps({"group_type": "org", "group_value": "1"}))
    assert raised.value.status == 429 and len(server.requests) == 1 and sleeps == []

    # A Retry-After over a minute is handed back at once, and a 4xx other than 408/429 is final.
    for status, headers in [(429, {"Retry-After": "600"}), (404, {})]:
        server = serve(lambda _r, _i: (status, {"code": status, "error": "no"}, headers))
        with pytest.raises(session_replays.ApiException):
            session_replays.SessionReplaysApi(connected("session-replays", server, sleeps)).list_session_replays()
        assert len(server.requests) == 1 and sleeps == []


def test_the_callers_configuration_is_left_as_given():
    configuration = ingestion.Configuration(host="http://127.0.0.1:1")
    client = ingestion.ApiClient(configuration)
    assert configuration.retries is None
    assert client.rest_client.pool_manager.connection_pool_kw["retries"].respect_retry_after_header is False
