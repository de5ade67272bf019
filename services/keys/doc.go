// Package keys is the keys service (DESIGN §1, §5): the only owner of
// accounts, API keys and exchange credentials. Its Service holds the
// business rules (tier key quotas, immutable validated scopes, expiry,
// credential secret shapes per exchange) and seals credential secrets with
// AES-256-GCM under PERPGATE_MASTER_KEY. It answers the edge's key and
// credential look-ups and releases secrets to connectors as a NATS micro
// service, serves the admin REST API of keys/admin, and publishes
// contract.ChangeEvents when a key is revoked or a credential deleted.
//
// State lives behind Store, implemented by keys/postgres (production) and
// keys/filestore (standalone). Only the SHA-256 of an API key and its
// 12-character display are ever stored; the full key exists once, in the
// reply to its creation.
package keys
