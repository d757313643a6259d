// Package sdk is the Go SDK of the svc HTTP APIs: one generated client package per interface
// group (svc/sdk/generated/<group>, e.g. svc/sdk/generated/reporting), and here the helpers
// that pick a group's server by region and send the project's credentials wherever the API
// takes them:
//
//	cfg := reporting.NewConfiguration()
//	url, _ := sdk.ServerURL("reporting", "eu") // or the base URL of your deployment
//	cfg.Servers = reporting.ServerConfigurations{{URL: url}}
//	cfg.HTTPClient = sdk.HTTPClient("reporting", sdk.Credentials{APIKey: key, SecretKey: secret})
//	client := reporting.NewAPIClient(cfg)
//
// or, for a group named at run time, Connect.
package sdk

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"svc/sdk/generated"
)

//go:embed generated/apis.json
var apisJSON []byte

//go:embed generated/credentials.json
var credentialsJSON []byte

type server struct {
	HostRole string `json:"hostRole"`
	Region   string `json:"region"`
	URL      string `json:"url"`
}

type api struct {
	Name    string   `json:"name"`
	Servers []server `json:"servers"`
}

// requestCredential is where an operation takes the API key in the request itself.
type requestCredential struct {
	In   string `json:"in"` // "body" (JSON member) or "form" (form field)
	Name string `json:"name"`
}

// groupCredentials says how a group's requests carry credentials.
type groupCredentials struct {
	Authorization string                       `json:"authorization"` // "basic", "api-key" or ""
	InRequest     map[string]requestCredential `json:"inRequest"`     // "METHOD /path" → where the key goes
	QueryKey      map[string]string            `json:"queryKey"`      // "METHOD /path" → query parameter of the key
}

func apis() []api {
	var list []api
	if err := json.Unmarshal(apisJSON, &list); err != nil {
		panic(fmt.Sprintf("svc/sdk: generated/apis.json: %v", err))
	}
	return list
}

// Groups lists the names of the interface groups.
func Groups() []string {
	var names []string
	for _, a := range apis() {
		names = append(names, a.Name)
	}
	return names
}

// ServerURL is the base URL of the group's server in region ("standard" or "eu"): the default
// of its server variable, the reference server's address. Other deployments pass their own
// base URL instead.
func ServerURL(group, region string) (string, error) {
	for _, a := range apis() {
		if a.Name != group {
			continue
		}
		var regions []string
		for _, s := range a.Servers {
			if s.Region == region {
				return s.URL, nil
			}
			regions = append(regions, s.Region)
		}
		return "", fmt.Errorf("group %s has no server in region %q; its regions: %s", group, region, strings.Join(regions, ", "))
	}
	return "", fmt.Errorf("unknown interface group %q; known: %s", group, strings.Join(Groups(), ", "))
}

// Credentials of a project. Each is sent where an operation takes it:
//   - APIKey and SecretKey: HTTP Basic (BasicAuth) for the groups that take it;
//   - APIKey: the `api_key` JSON member or form field of the operations that carry it in the
//     request (ingestion, user mapping), and the `api_key` query parameter of those whose
//     security takes it there, each filled in when the request has none;
//   - DeploymentKey: `Authorization: Api-Key <key>` for the groups that take it (experiment evaluation).
type Credentials struct {
	APIKey        string
	SecretKey     string
	DeploymentKey string
}

// HTTPClient is an *http.Client for the group's generated client (Configuration.HTTPClient)
// that adds the credentials to every request.
func HTTPClient(group string, c Credentials) *http.Client {
	return &http.Client{Transport: Transport(group, c, http.DefaultTransport)}
}

// Transport wraps next with the credentials of HTTPClient.
func Transport(group string, c Credentials, next http.RoundTripper) http.RoundTripper {
	var all map[string]groupCredentials
	if err := json.Unmarshal(credentialsJSON, &all); err != nil {
		panic(fmt.Sprintf("svc/sdk: generated/credentials.json: %v", err))
	}
	return &credentialTransport{group: all[group], credentials: c, next: next}
}

// Connect makes the *APIClient of a group named at run time (assert it to the group's
// *<group>.APIClient); baseURL "" means the group's server in region.
func Connect(group, region, baseURL string, c Credentials) (interface{}, error) {
	newClient, ok := generated.Clients[group]
	if !ok {
		return nil, fmt.Errorf("unknown interface group %q; known: %s", group, strings.Join(Groups(), ", "))
	}
	if baseURL == "" {
		var err error
		if baseURL, err = ServerURL(group, region); err != nil {
			return nil, err
		}
	}
	return newClient(strings.TrimRight(baseURL, "/"), HTTPClient(group, c)), nil
}

type credentialTransport struct {
	group       groupCredentials
	credentials Credentials
	next        http.RoundTripper
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	c := t.credentials
	if req.Header.Get("Authorization") == "" {
		if t.group.Authorization == "basic" && c.APIKey != "" && c.SecretKey != "" {
			req.SetBasicAuth(c.APIKey, c.SecretKey)
		} else if t.group.Authorization == "api-key" && c.DeploymentKey != "" {
			req.Header.Set("Authorization", "Api-Key "+c.DeploymentKey)
		}
	}
	if c.APIKey != "" {
		if name, ok := t.group.QueryKey[route(req, t.group.QueryKey)]; ok {
			query := req.URL.Query()
			if query.Get(name) == "" {
				query.Set(name, c.APIKey)
				req.URL.RawQuery = query.Encode()
			}
		}
		if credential, ok := t.group.InRequest[route(req, t.group.InRequest)]; ok && req.Body != nil {
			if err := putKey(req, credential, c.APIKey); err != nil {
				return nil, err
			}
		}
	}
	return t.next.RoundTrip(req)
}

// route is the key of routes ("METHOD /path", a path without parameters) that the request
// matches, or "".
func route[T any](req *http.Request, routes map[string]T) string {
	for r := range routes {
		method, path, _ := strings.Cut(r, " ")
		if req.Method == method && strings.HasSuffix(req.URL.Path, path) {
			return r
		}
	}
	return ""
}

// putKey adds the API key to the request's JSON body or form unless it is there already.
func putKey(req *http.Request, credential requestCredential, key string) error {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	switch credential.In {
	case "body":
		var members map[string]json.RawMessage
		if err := json.Unmarshal(body, &members); err == nil && members != nil {
			if current, ok := members[credential.Name]; !ok || string(current) == "null" {
				members[credential.Name], _ = json.Marshal(key)
				body, _ = json.Marshal(members)
			}
		}
	case "form":
		if fields, err := url.ParseQuery(string(body)); err == nil && fields.Get(credential.Name) == "" {
			fields.Set(credential.Name, key)
			body = []byte(fields.Encode())
		}
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}
