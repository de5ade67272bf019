// Package fault holds the fault tests of the distributed deployment: keys,
// edge, paper-venue and connector-paper run as separate processes against
// a nats-server and a redis-server of the test's own, which the tests
// kill, pause and restart (never the machine's shared services). Each test
// names the README "Failure behaviour" line it checks.
package fault
