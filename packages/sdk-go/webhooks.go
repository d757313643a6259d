package sdk

// Event streaming deliveries are signed as the Standard Webhooks convention says: webhook-id
// (the same on every attempt), webhook-timestamp (seconds) and webhook-signature ("v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body" keyed by the secret's bytes, the base64 after
// "whsec_"; several, space-separated, while a secret rotates).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far from now a delivery's timestamp may be before it is refused as a replay.
const WebhookTolerance = 5 * time.Minute

// ErrWebhookVerification is wrapped by every error of VerifyWebhook.
var ErrWebhookVerification = errors.New("webhook verification failed")

func webhookKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: the webhook secret is empty or not base64", ErrWebhookVerification)
	}
	return key, nil
}

// SignWebhook is the webhook-signature value of a delivery.
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := webhookKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// VerifyWebhook checks a delivery's signature at the current time, with WebhookTolerance: body
// exactly as received (not re-serialized), its headers, the destination's secret. The error
// wraps ErrWebhookVerification when a header is missing, the timestamp is too far from now (a
// replay) or no signature matches.
func VerifyWebhook(body []byte, header http.Header, secret string) error {
	return VerifyWebhookAt(body, header, secret, time.Now(), WebhookTolerance)
}

// VerifyWebhookAt is VerifyWebhook at the time now, with the tolerance given.
func VerifyWebhookAt(body []byte, header http.Header, secret string, now time.Time, tolerance time.Duration) error {
	id, timestamp, signatures := header.Get("webhook-id"), header.Get("webhook-timestamp"), strings.Join(header.Values("webhook-signature"), " ")
	for name, value := range map[string]string{"webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signatures} {
		if value == "" {
			return fmt.Errorf("%w: the delivery has no %s header", ErrWebhookVerification, name)
		}
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || seconds < 0 {
		return fmt.Errorf("%w: the webhook-timestamp header is not a number of seconds: %s", ErrWebhookVerification, timestamp)
	}
	age := now.Sub(time.Unix(seconds, 0))
	if age > tolerance {
		return fmt.Errorf("%w: the delivery was signed %d s ago, more than %d s: refused as a replay", ErrWebhookVerification, int64(math.Round(age.Seconds())), int64(tolerance.Seconds()))
	}
	if age < -tolerance {
		return fmt.Errorf("%w: the delivery's timestamp is %d s ahead, more than %d s", ErrWebhookVerification, int64(math.Round(-age.Seconds())), int64(tolerance.Seconds()))
	}
	expected, err := SignWebhook(secret, id, seconds, body)
	if err != nil {
		return err
	}
	for _, signature := range strings.Split(signatures, " ") {
		if strings.HasPrefix(signature, "v1,") && hmac.Equal([]byte(signature), []byte(expected)) {
			return nil
		}
	}
	return fmt.Errorf("%w: no webhook-signature matches the body with this secret", ErrWebhookVerification)
}
