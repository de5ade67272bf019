// Package deploy has no code of its own. The module holds what it takes to
// run perpgate as separate containers (Dockerfile, nats.conf, the
// healthcheck probe in cmd/healthcheck) and the tests that check those
// files, docker-compose.yml and the Kubernetes manifests in k8s/ against
// the services in services/: the NATS permissions against a real
// nats-server, the compose file and the kustomize overlays by parsing them.
package deploy
