package testenv

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Sent is one request a client put on the wire.
type Sent struct {
	Method, Scheme, Host, Path, Query, Body string
	Header                                  http.Header
}

// Recorder answers a client's requests in process and keeps each one, for
// tests that compare what a connector sends with a reference.
type Recorder struct {
	answer func(method, path string) (status int, body string)

	mu   sync.Mutex
	sent []Sent
}

// NewRecorder returns an HTTP client whose requests r records and answers
// with answer (a JSON body and its status).
func NewRecorder(answer func(method, path string) (status int, body string)) (*http.Client, *Recorder) {
	r := &Recorder{answer: answer}
	return &http.Client{Transport: RoundTripFunc(r.roundTrip)}, r
}

func (r *Recorder) roundTrip(req *http.Request) (*http.Response, error) {
	body := ""
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		body = string(b)
	}
	r.mu.Lock()
	r.sent = append(r.sent, Sent{Method: req.Method, Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path,
		Query: req.URL.RawQuery, Body: body, Header: req.Header.Clone()})
	r.mu.Unlock()
	status, ans := r.answer(req.Method, req.URL.Path)
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(ans)), Request: req}, nil
}

// Sent is every request so far, in order.
func (r *Recorder) Sent() []Sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sent(nil), r.sent...)
}

// Only is the one request to method and path; t fails when there is none
// or more than one.
func (r *Recorder) Only(t testing.TB, method, path string) Sent {
	t.Helper()
	var got []Sent
	for _, s := range r.Sent() {
		if s.Method == method && s.Path == path {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d requests %s %s among %d, want one", len(got), method, path, len(r.Sent()))
	}
	return got[0]
}
