// Package testenv gives tests ready clients for the infrastructure
// perpgate runs on: NATS, Redis and Postgres on this machine (or where
// PERPGATE_TEST_NATS_URL, PERPGATE_TEST_REDIS_URL and
// PERPGATE_TEST_DATABASE_URL point), and an embedded NATS server. Each
// helper scopes what it returns to the test (a fresh schema, a unique key
// or subject prefix), registers its cleanup with t.Cleanup, and, when the
// service is unreachable, skips the test with a message saying how to start
// it, or fails it when PERPGATE_REQUIRE_SERVICES=1 (DESIGN §11, STYLE.md
// "Tests"). It is imported only from _test.go files.
package testenv
