package sdk_test

// Every operation of every interface group, called through the SDK against the Prism mock with
// arguments built from the specs' examples (packages/sdk-codegen dist/calls.json). Operations,
// parameters and builder methods are found by reflection from the names in the bundles; the
// request body goes through the generated model; the answer must be the documented status,
// typed as the documented model, and keep every value the mock sent.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"svc/sdk"
	"svc/sdk/generated"
)

type call struct {
	API         string  `json:"api"`
	HostRole    string  `json:"hostRole"`
	OperationID string  `json:"operationId"`
	Params      []field `json:"params"`
	Body        *struct {
		MediaType string          `json:"mediaType"`
		Value     json.RawMessage `json:"value"`
		Model     string          `json:"model"`
		Fields    []field         `json:"fields"`
	} `json:"body"`
	Status   int `json:"status"`
	Response struct {
		Model     string `json:"model"`
		ListOf    string `json:"listOf"`
		MapOf     string `json:"mapOf"`
		Untyped   bool   `json:"untyped"`
		MediaType string `json:"mediaType"`
	} `json:"response"`
}

type field struct {
	Name  string          `json:"name"`
	In    string          `json:"in"`
	Value json.RawMessage `json:"value"`
}

// Any well-formed credentials: the mock checks that they are present, not whom they name.
var mockCredentials = sdk.Credentials{APIKey: "6f1c2b9e4d7a4c3b8e2f0a1d5c9b7e34", SecretKey: "secret-key-0123", DeploymentKey: "server-deployment-key-0123"}

func loadCalls(t *testing.T) []call {
	raw, err := os.ReadFile(env(t, "SVC_SDK_CALLS"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []call
	if err := json.Unmarshal(raw, &calls); err != nil {
		t.Fatal(err)
	}
	return calls
}

func TestEveryOperationOfEveryGroupHasACall(t *testing.T) {
	calls := loadCalls(t)
	seen := map[string]bool{}
	for _, c := range calls {
		seen[c.API] = true
	}
	for _, group := range sdk.Groups() {
		if !seen[group] {
			t.Errorf("no call for group %s", group)
		}
		if _, ok := generated.Clients[group]; !ok {
			t.Errorf("no generated client for group %s", group)
		}
	}
	if len(calls) < 60 {
		t.Errorf("only %d calls", len(calls))
	}
}

func TestOperationsAgainstTheMock(t *testing.T) {
	mocks := urls(t, "SVC_MOCK_URLS")
	for _, c := range loadCalls(t) {
		c := c
		t.Run(c.API+"."+c.OperationID, func(t *testing.T) {
			rec := &recorder{next: http.DefaultTransport}
			httpClient := &http.Client{Transport: sdk.Transport(c.API, mockCredentials, rec)}
			client := generated.Clients[c.API](mocks[c.HostRole], httpClient)
			result, resp, err := callOperation(t, client, c)
			if err != nil {
				t.Fatalf("%v (status %v, body %s)", err, statusOf(resp), rec.last)
			}
			if resp.StatusCode != c.Status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.Status)
			}
			if v := resp.Header.Get("sl-violations"); v != "" {
				t.Fatalf("the mock found violations: %s", v)
			}
			typ := result.Type()
			switch {
			case c.Response.Model != "":
				expectType(t, typ.Name(), c.Response.Model)
			case c.Response.ListOf != "":
				if typ.Kind() != reflect.Slice || result.Len() == 0 {
					t.Fatalf("answer is %v, want a non-empty []%s", typ, c.Response.ListOf)
				}
				expectType(t, typ.Elem().Name(), c.Response.ListOf)
			case c.Response.MapOf != "":
				if typ.Kind() != reflect.Map || result.Len() == 0 {
					t.Fatalf("answer is %v, want a non-empty map of %s", typ, c.Response.MapOf)
				}
				expectType(t, typ.Elem().Name(), c.Response.MapOf)
			case c.Response.Untyped:
				if result.IsNil() {
					t.Fatal("no answer")
				}
			case typ == reflect.TypeOf(&os.File{}):
				// Binary (format: binary): the SDK hands over a file with the bytes.
				content, err := io.ReadAll(result.Interface().(*os.File))
				if err != nil || len(content) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.Response.MediaType) {
					t.Fatalf("answer file (%s, %d bytes, %v) is not %s", resp.Header.Get("Content-Type"), len(content), err, c.Response.MediaType)
				}
				return
			default:
				// Not JSON (text/csv): the SDK hands over the text.
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), c.Response.MediaType) || typ.Kind() != reflect.String || result.Len() == 0 {
					t.Fatalf("answer %v (%s) is not %s text", typ, resp.Header.Get("Content-Type"), c.Response.MediaType)
				}
				return
			}
			read, err := json.Marshal(result.Interface())
			if err != nil {
				t.Fatal(err)
			}
			assertKeeps(t, "$", generic(t, rec.last), generic(t, read))
		})
	}
}

func statusOf(resp *http.Response) interface{} {
	if resp == nil {
		return nil
	}
	return resp.StatusCode
}

func expectType(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("answer typed %s, want %s", got, want)
	}
}

// callOperation finds the operation's method among the client's services, passes the path
// parameters, sets every other parameter, form field and the body through the request
// builder, and executes it.
func callOperation(t *testing.T, client interface{}, c call) (reflect.Value, *http.Response, error) {
	t.Helper()
	services := reflect.ValueOf(client).Elem()
	name := string(unicode.ToUpper(rune(c.OperationID[0]))) + c.OperationID[1:]
	var method reflect.Value
	found := 0
	for i := 0; i < services.NumField(); i++ {
		if f := services.Field(i); services.Type().Field(i).IsExported() && f.Kind() == reflect.Ptr {
			if m := f.MethodByName(name); m.IsValid() {
				method, found = m, found+1
			}
		}
	}
	if found != 1 {
		t.Fatalf("%d services have %s", found, name)
	}
	args := []reflect.Value{reflect.ValueOf(context.Background())}
	var rest []field
	for _, p := range c.Params {
		if p.In == "path" {
			args = append(args, decode(t, p.Name, p.Value, method.Type().In(len(args))))
		} else {
			rest = append(rest, p)
		}
	}
	if method.Type().NumIn() != len(args) {
		t.Fatalf("%s takes %d arguments, the call has %d path parameters", name, method.Type().NumIn()-1, len(args)-1)
	}
	request := method.Call(args)[0]
	set := func(name string, value reflect.Value) {
		request = builder(t, request, name).Call([]reflect.Value{value})[0]
	}
	for _, p := range rest {
		set(p.Name, decode(t, p.Name, p.Value, builder(t, request, p.Name).Type().In(0)))
	}
	if b := c.Body; b != nil {
		for _, f := range b.Fields {
			set(f.Name, decode(t, f.Name, f.Value, builder(t, request, f.Name).Type().In(0)))
		}
		if b.Fields == nil {
			body := decode(t, "body", b.Value, builder(t, request, "body").Type().In(0))
			if b.Model != "" {
				expectType(t, body.Type().Name(), b.Model)
			}
			written, err := json.Marshal(body.Interface())
			if err != nil {
				t.Fatal(err)
			}
			// The example must survive the model (nulls included: Nullable* keep them).
			assertKeeps(t, "request body", generic(t, b.Value), generic(t, written))
			set("body", body)
		}
	}
	out := request.MethodByName("Execute").Call(nil)
	resp, _ := out[1].Interface().(*http.Response)
	err, _ := out[2].Interface().(error)
	return out[0], resp, err
}

func normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// builder is the request builder's method for the parameter (Go name of the spec's name).
func builder(t *testing.T, request reflect.Value, name string) reflect.Value {
	t.Helper()
	var found []reflect.Value
	for i := 0; i < request.NumMethod(); i++ {
		if m := request.Type().Method(i); m.Name != "Execute" && normalize(m.Name) == normalize(name) {
			found = append(found, request.Method(i))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s has %d builder methods for %q", request.Type(), len(found), name)
	}
	return found[0]
}

// decode turns an example into a value of the argument's type.
func decode(t *testing.T, name string, raw json.RawMessage, typ reflect.Type) reflect.Value {
	t.Helper()
	target := reflect.New(typ)
	if typ.Kind() == reflect.String && len(raw) > 0 && raw[0] != '"' {
		target.Elem().SetString(string(raw)) // a number in the path, e.g. an id
		return target.Elem()
	}
	if err := json.Unmarshal(raw, target.Interface()); err != nil {
		t.Fatalf("%s: the example %s is no %v: %v", name, raw, typ, err)
	}
	return target.Elem()
}
