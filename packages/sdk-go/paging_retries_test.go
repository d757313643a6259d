package sdk_test

// What the templates carry from the specs' extensions, against a fake server: a Pager walks
// every page of a listing (x-svc-pagination), and a request that may be sent again (GET, PUT,
// DELETE, or x-svc-idempotent) is, after a 429 or a 5xx, waiting Retry-After or a jittered backoff.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/sdk"
	"svc/sdk/generated/ingestion"
	"svc/sdk/generated/reporting"
	"svc/sdk/generated/sessionreplays"
)

var fakeKeys = sdk.Credentials{APIKey: "api-key-0123", SecretKey: "secret-key-0123"}

type seenRequest struct {
	query map[string]string
	body  string
}

// fakeServer answers with answer(request, index) (status, JSON body, headers) and records each request.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

func serve(t *testing.T, answer func(query map[string]string, index int) (int, interface{}, map[string]string)) *fakeServer {
	fake := &fakeServer{}
	fake.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		query := map[string]string{}
		for name := range r.URL.Query() {
			query[name] = r.URL.Query().Get(name)
		}
		fake.mu.Lock()
		fake.seen = append(fake.seen, seenRequest{query, string(body)})
		index := len(fake.seen) - 1
		fake.mu.Unlock()
		status, payload, headers := answer(query, index)
		for name, value := range headers {
			w.Header().Set(name, value)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(payload)
	}))
	t.Cleanup(fake.Close)
	return fake
}

func (f *fakeServer) queries(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var values []string
	for _, request := range f.seen {
		values = append(values, request.query[name])
	}
	return values
}

// waits records the waits between retries instead of sleeping.
type waits []time.Duration

func (w *waits) sleep(_ context.Context, d time.Duration) error {
	*w = append(*w, d)
	return nil
}

func sessionReplaysClient(server *fakeServer, w *waits) *sessionreplays.APIClient {
	cfg := sessionreplays.NewConfiguration()
	cfg.Servers = sessionreplays.ServerConfigurations{{URL: server.URL}}
	cfg.HTTPClient = sdk.HTTPClient("session-replays", fakeKeys)
	client := sessionreplays.NewAPIClient(cfg)
	client.Sleep = w.sleep
	return client
}

func equal(t *testing.T, what string, got, want interface{}) {
	t.Helper()
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Errorf("%s: %s, want %s", what, a, b)
	}
}

func TestPagerFollowsNextPageToken(t *testing.T) {
	pages := map[string][]interface{}{"": {[]string{"a/1", "a/2"}, "p2"}, "p2": {[]string{"b/1"}, "p3"}, "p3": {[]string{}, nil}}
	server := serve(t, func(query map[string]string, _ int) (int, interface{}, map[string]string) {
		page := pages[query["page_token"]]
		var replays []map[string]string
		for _, id := range page[0].([]string) {
			replays = append(replays, map[string]string{"replay_id": id})
		}
		return 200, map[string]interface{}{"session_replays": replays, "next_page_token": page[1]}, nil
	})
	pager := sessionReplaysClient(server, &waits{}).SessionReplaysApi.ListSessionReplays(context.Background()).SortOrder("desc").Pager()
	var ids []string
	for pager.HasMorePages() {
		page, _, err := pager.NextPage()
		if err != nil {
			t.Fatal(err)
		}
		for _, replay := range page.SessionReplays {
			ids = append(ids, replay.ReplayId)
		}
	}
	equal(t, "replays", ids, []string{"a/1", "a/2", "b/1"})
	equal(t, "page tokens sent", server.queries("page_token"), []string{"", "p2", "p3"})
	equal(t, "sort orders sent", server.queries("sort_order"), []string{"desc", "desc", "desc"})
}

func TestPagerReadsOffsetPagesUntilAShorterOne(t *testing.T) {
	server := serve(t, func(query map[string]string, index int) (int, interface{}, map[string]string) {
		events := []map[string]int{{"event_id": 2 * index}, {"event_id": 2*index + 1}}
		if index == 2 {
			events = events[:1]
		}
		return 200, map[string]interface{}{"userData": map[string]interface{}{}, "events": events}, nil
	})
	cfg := reporting.NewConfiguration()
	cfg.Servers = reporting.ServerConfigurations{{URL: server.URL}}
	cfg.HTTPClient = sdk.HTTPClient("reporting", fakeKeys)
	pager := reporting.NewAPIClient(cfg).ReportingBeyondTheDocumentsApi.GetUserActivity(context.Background()).User(510384112467).Limit(2).Pager()
	count := 0
	for pager.HasMorePages() {
		page, _, err := pager.NextPage()
		if err != nil {
			t.Fatal(err)
		}
		count += len(page.Events)
	}
	if count != 5 {
		t.Errorf("%d events, want 5", count)
	}
	equal(t, "offsets sent", server.queries("offset"), []string{"", "2", "4"})
}

func TestAnIdempotentUploadIsSentAgainAfter429WithRetryAfter(t *testing.T) {
	server := serve(t, func(_ map[string]string, index int) (int, interface{}, map[string]string) {
		if index == 0 {
			return 429, map[string]interface{}{"code": 429, "error": "slow down"}, map[string]string{"Retry-After": "2"}
		}
		return 200, map[string]int{"code": 200, "events_ingested": 1, "payload_size_bytes": 80, "server_upload_time": 1}, nil
	})
	cfg := ingestion.NewConfiguration()
	cfg.Servers = ingestion.ServerConfigurations{{URL: server.URL}}
	cfg.HTTPClient = sdk.HTTPClient("ingestion", fakeKeys)
	client := ingestion.NewAPIClient(cfg)
	var w waits
	client.Sleep = w.sleep
	events := []ingestion.EventRecord{*ingestion.NewEventRecord("Play")}
	answer, _, err := client.EventIngestionApi.CreateBatchEvents(context.Background()).Body(*ingestion.NewEventUploadRequest(events)).Execute()
	if err != nil {
		t.Fatal(err)
	}
	if answer.EventsIngested != 1 {
		t.Errorf("events_ingested %d, want 1", answer.EventsIngested)
	}
	equal(t, "waits", w, waits{2 * time.Second})
	if len(server.seen) != 2 || server.seen[0].body != server.seen[1].body || !strings.Contains(server.seen[1].body, fakeKeys.APIKey) {
		t.Errorf("the upload was not sent again as it was: %+v", server.seen)
	}

	// A POST without x-svc-idempotent is never sent again.
	identify := serve(t, func(map[string]string, int) (int, interface{}, map[string]string) {
		return 429, map[string]interface{}{"code": 429, "error": "slow down"}, map[string]string{"Retry-After": "1"}
	})
	client.GetConfig().Servers = ingestion.ServerConfigurations{{URL: identify.URL}}
	_, response, err := client.GroupIdentificationApi.CreateGroupIdentifications(context.Background()).Identification(`{"group_type":"org","group_value":"1"}`).Execute()
	if err == nil || response.StatusCode != 429 || len(identify.seen) != 1 || len(w) != 1 {
		t.Errorf("group identification: err %v, %d requests, waits %v", err, len(identify.seen), w)
	}
}

func TestAGetIsSentAgainAfter5xxWithAJitteredBackoffAtMostMaxRetriesTimes(t *testing.T) {
	server := serve(t, func(map[string]string, int) (int, interface{}, map[string]string) {
		return 503, map[string]interface{}{"code": 503, "error": "storage unavailable"}, nil
	})
	var w waits
	_, response, err := sessionReplaysClient(server, &w).SessionReplaysApi.ListSessionReplays(context.Background()).Execute()
	if err == nil || response.StatusCode != 503 || len(server.seen) != 3 || len(w) != 2 {
		t.Fatalf("err %v, %d requests, waits %v", err, len(server.seen), w)
	}
	if w[0] < 0 || w[0] >= 500*time.Millisecond || w[1] < 0 || w[1] >= time.Second {
		t.Errorf("waits %v, want below 0.5 s then 1 s", w)
	}
}

func TestWhatAGetIsNotSentAgainAfter(t *testing.T) {
	for _, answer := range []struct {
		status  int
		headers map[string]string
	}{{429, map[string]string{"Retry-After": "600"}}, {404, nil}} {
		server := serve(t, func(map[string]string, int) (int, interface{}, map[string]string) {
			return answer.status, map[string]interface{}{"code": answer.status, "error": "no"}, answer.headers
		})
		var w waits
		_, _, err := sessionReplaysClient(server, &w).SessionReplaysApi.ListSessionReplays(context.Background()).Execute()
		if err == nil || len(server.seen) != 1 || len(w) != 0 {
			t.Errorf("%d: err %v, %d requests, waits %v", answer.status, err, len(server.seen), w)
		}
	}
}
