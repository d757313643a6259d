package sdk

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks specification's test vector.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func vectorHeader(overrides map[string]string) http.Header {
	header := http.Header{}
	header.Set("webhook-id", vectorID)
	header.Set("webhook-timestamp", "1614265330")
	header.Set("webhook-signature", vectorSignature)
	for name, value := range overrides {
		if value == "" {
			header.Del(name)
		} else {
			header.Set(name, value)
		}
	}
	return header
}

func TestSignWebhookReproducesTheSpecificationVector(t *testing.T) {
	for _, secret := range []string{vectorSecret, strings.TrimPrefix(vectorSecret, "whsec_")} {
		signature, err := SignWebhook(secret, vectorID, vectorTimestamp, []byte(vectorBody))
		if err != nil || signature != vectorSignature {
			t.Fatalf("SignWebhook(%q) = %q, %v; want %q", secret, signature, err, vectorSignature)
		}
	}
}

func TestVerifyWebhook(t *testing.T) {
	at := time.Unix(vectorTimestamp, 0)
	if err := VerifyWebhookAt([]byte(vectorBody), vectorHeader(nil), vectorSecret, at.Add(300*time.Second), WebhookTolerance); err != nil {
		t.Fatalf("the vector is refused: %v", err)
	}
	rotating := vectorHeader(map[string]string{"webhook-signature": "v1,bm9wZQ== " + vectorSignature})
	if err := VerifyWebhookAt([]byte(vectorBody), rotating, vectorSecret, at, WebhookTolerance); err != nil {
		t.Fatalf("a rotation's second signature is refused: %v", err)
	}
	refused := []struct {
		name, body, secret, message string
		header                      http.Header
		now                         time.Time
	}{
		{"a changed body", `{"test": 2432232315}`, vectorSecret, "no webhook-signature matches", vectorHeader(nil), at},
		{"another secret", vectorBody, "whsec_bm90IHRoZSBzZWNyZXQ=", "no webhook-signature matches", vectorHeader(nil), at},
		{"another id", vectorBody, vectorSecret, "no webhook-signature matches", vectorHeader(map[string]string{"webhook-id": "msg_other"}), at},
		{"no signature", vectorBody, vectorSecret, "no webhook-signature header", vectorHeader(map[string]string{"webhook-signature": ""}), at},
		{"a timestamp that is not seconds", vectorBody, vectorSecret, "not a number of seconds", vectorHeader(map[string]string{"webhook-timestamp": "2021-02-25"}), at},
		{"a replay", vectorBody, vectorSecret, "signed 301 s ago, more than 300 s: refused as a replay", vectorHeader(nil), at.Add(301 * time.Second)},
		{"a timestamp ahead", vectorBody, vectorSecret, "301 s ahead", vectorHeader(nil), at.Add(-301 * time.Second)},
	}
	for _, c := range refused {
		err := VerifyWebhookAt([]byte(c.body), c.header, c.secret, c.now, WebhookTolerance)
		if err == nil || !errors.Is(err, ErrWebhookVerification) || !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: got %v, want an ErrWebhookVerification saying %q", c.name, err, c.message)
		}
	}
}
