package sdk_test

// End to end against the reference server: events uploaded through the ingestion client are
// counted by event segmentation through the reporting client.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"testing"
	"time"

	"svc/sdk"
	"svc/sdk/generated/ingestion"
	"svc/sdk/generated/reporting"
)

func total(series [][]float64) float64 {
	sum := 0.0
	for _, s := range series {
		for _, v := range s {
			sum += v
		}
	}
	return sum
}

func TestUploadedEventsAreCountedBySegmentation(t *testing.T) {
	servers := urls(t, "SVC_SERVER_URLS")
	keys := sdk.Credentials{APIKey: env(t, "SVC_API_KEY"), SecretKey: env(t, "SVC_SECRET_KEY")}
	ctx := context.Background()
	eventType := fmt.Sprintf("sdk-go-%08x", rand.New(rand.NewSource(time.Now().UnixNano())).Uint32())
	now := time.Now().UTC()
	day := now.Format("20060102")

	// The API key is not in the request: sdk.HTTPClient puts it into the body.
	upload, err := sdk.Connect("ingestion", "", servers["ingest"], keys)
	if err != nil {
		t.Fatal(err)
	}
	var events []ingestion.EventRecord
	for i := 0; i < 3; i++ {
		event := ingestion.NewEventRecord(eventType)
		event.SetUserId(fmt.Sprintf("user-%d", i%2))
		event.SetTime(now.UnixMilli() + int64(i))
		events = append(events, *event)
	}
	answer, _, err := upload.(*ingestion.APIClient).EventIngestionApi.CreateBatchEvents(ctx).Body(*ingestion.NewEventUploadRequest(events)).Execute()
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if answer.EventsIngested != 3 {
		t.Fatalf("events_ingested %d, want 3", answer.EventsIngested)
	}

	cfg := reporting.NewConfiguration()
	cfg.Servers = reporting.ServerConfigurations{{URL: servers["app"]}}
	cfg.HTTPClient = sdk.HTTPClient("reporting", keys)
	api := reporting.NewAPIClient(cfg).ReportingApi
	e, _ := json.Marshal(map[string]string{"event_type": eventType})
	var result reporting.EventSegmentationResult
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		result, _, err = api.GetEventSegmentation(ctx).E(string(e)).Start(day).End(day).M("totals").Execute()
		if err != nil {
			t.Fatalf("segmentation: %v", err)
		}
		if total(result.Data.Series) == 3 || time.Now().After(deadline) {
			break // events reach the store in the background
		}
	}
	if got := total(result.Data.Series); got != 3 {
		t.Fatalf("totals %v, want 3", got)
	}
	if len(result.Data.XValues) != 1 || result.Data.XValues[0] != now.Format("2006-01-02") {
		t.Fatalf("xValues %v", result.Data.XValues)
	}
	uniques, _, err := api.GetEventSegmentation(ctx).E(string(e)).Start(day).End(day).Execute()
	if err != nil {
		t.Fatal(err)
	}
	if got := total(uniques.Data.Series); got != 2 {
		t.Fatalf("uniques %v, want 2", got)
	}
}

func TestTheServerRefusesAWrongSecretKey(t *testing.T) {
	servers := urls(t, "SVC_SERVER_URLS")
	client, err := sdk.Connect("reporting", "", servers["app"], sdk.Credentials{APIKey: env(t, "SVC_API_KEY"), SecretKey: "not-the-secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := client.(*reporting.APIClient).ReportingApi.ListEventTypeTotals(context.Background()).Execute()
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong secret key got %v, %v", resp, err)
	}
}

func TestServerURLByRegion(t *testing.T) {
	standard, err := sdk.ServerURL("reporting", "standard")
	if err != nil {
		t.Fatal(err)
	}
	eu, err := sdk.ServerURL("reporting", "eu")
	if err != nil || eu == standard {
		t.Fatalf("eu %q (%v), standard %q", eu, err, standard)
	}
	if _, err := sdk.ServerURL("reporting", "mars"); err == nil {
		t.Fatal("an unknown region was accepted")
	}
}
