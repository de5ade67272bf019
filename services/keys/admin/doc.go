// Package admin is the keys service's admin surface (DESIGN §5): the REST
// API under /admin/v1 on echo (NewHandler), a Go Client of that API, and
// the operator CLI (RunCLI) that the standalone binary exposes as
// `perpgate account|key|credential ...`. Every request carries the bearer
// PERPGATE_ADMIN_TOKEN; errors use the /v1 envelope
// {success:false, code, error}.
//
// The package does not depend on the keys service itself: NewHandler
// serves any Backend, which keys.Service provides.
package admin
