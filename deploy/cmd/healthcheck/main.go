// Command healthcheck probes a service from inside its container, where
// the distroless runtime image has no shell, curl or wget. It exits 0 when
// the target is healthy and 1, printing why, when it is not:
//
//	healthcheck http://127.0.0.1:8082/readyz   an HTTP GET answers 2xx
//	healthcheck tcp://127.0.0.1:8091           the port accepts a connection
//
// docker-compose.yml uses it as every perpgate container's healthcheck;
// Kubernetes probes the same endpoints with httpGet instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	timeout := flag.Duration("timeout", 3*time.Second, "give up after this long")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: healthcheck [-timeout 3s] http://host:port/path | tcp://host:port")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := probe(ctx, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
		os.Exit(1)
	}
}

// probe checks target once within ctx.
func probe(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL such as http://127.0.0.1:8082/readyz", target)
	}
	switch u.Scheme {
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return fmt.Errorf("GET %s: %s %s", target, resp.Status, body)
		}
		return nil
	case "tcp":
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return errors.New("scheme must be http, https or tcp: " + target)
}
