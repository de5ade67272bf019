// Package bus is perpgate's NATS layer: connecting to an external server or
// starting an embedded one, typed request-reply whose errors are
// contract.Errors on both sides, and deadline propagation in headers.
package bus
