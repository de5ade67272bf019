// Package standalone composes every perpgate service into one process
// (`perpgate serve`): an embedded NATS server (or an external one), the keys
// service on a file store (or Postgres), the paper venue and its connector,
// and the edge with an in-process rate limiter (or Redis). These are the
// same packages the separate services run; nothing is re-implemented here.
package standalone
