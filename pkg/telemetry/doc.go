// Package telemetry sets up what every perpgate process reports about
// itself: the structured logger (log/slog) now, traces and metrics with
// OpenTelemetry as the deployment work adds them.
package telemetry
