package sdk_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"sync"
	"testing"
	"time"
)

// env reads what svc-sdk-services (packages/sdk-codegen) passes to the tests.
func env(t *testing.T, name string) string {
	t.Helper()
	value := os.Getenv(name)
	if value == "" {
		t.Fatalf("%s is not set: run the tests through `npm test` (svc-sdk-services starts the mocks and the server)", name)
	}
	return value
}

func urls(t *testing.T, name string) map[string]string {
	var result map[string]string
	if err := json.Unmarshal([]byte(env(t, name)), &result); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return result
}

// recorder keeps the body of the last response (the generated clients do not hand it over).
type recorder struct {
	mu   sync.Mutex
	last []byte
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.last = body
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func generic(t *testing.T, raw []byte) interface{} {
	t.Helper()
	var value interface{}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if err := decoder.Decode(&value); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return withoutNulls(value)
}

func withoutNulls(value interface{}) interface{} {
	switch v := value.(type) {
	case map[string]interface{}:
		out := map[string]interface{}{}
		for key, item := range v {
			if item != nil {
				out[key] = withoutNulls(item)
			}
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, item := range v {
			out[i] = withoutNulls(item)
		}
		return out
	}
	return value
}

var dateTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d`)

// assertKeeps: everything in sent (but nulls) is in read, at the same place.
func assertKeeps(t *testing.T, where string, sent, read interface{}) {
	t.Helper()
	switch s := sent.(type) {
	case map[string]interface{}:
		r, ok := read.(map[string]interface{})
		if !ok {
			t.Errorf("%s: %v read as %v", where, sent, read)
			return
		}
		for key, value := range s {
			if _, ok := r[key]; !ok {
				t.Errorf("%s.%s was dropped by the SDK", where, key)
				continue
			}
			assertKeeps(t, where+"."+key, value, r[key])
		}
	case []interface{}:
		r, ok := read.([]interface{})
		if !ok || len(r) != len(s) {
			t.Errorf("%s: %v read as %v", where, sent, read)
			return
		}
		for i := range s {
			assertKeeps(t, where+"["+itoa(i)+"]", s[i], r[i])
		}
	case json.Number:
		r, ok := read.(json.Number)
		a, errA := s.Float64()
		b, errB := r.Float64()
		if !ok || errA != nil || errB != nil || a != b {
			t.Errorf("%s: %v read as %v", where, sent, read)
		}
	case string:
		if read == sent {
			return
		}
		r, ok := read.(string)
		if ok && dateTime.MatchString(s) {
			// date-time values are read as time.Time and written in its RFC 3339 form
			a, errA := time.Parse(time.RFC3339Nano, s)
			b, errB := time.Parse(time.RFC3339Nano, r)
			if errA == nil && errB == nil && a.Equal(b) {
				return
			}
		}
		t.Errorf("%s: %q read as %v", where, s, read)
	default:
		if !reflect.DeepEqual(sent, read) {
			t.Errorf("%s: %v read as %v", where, sent, read)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
