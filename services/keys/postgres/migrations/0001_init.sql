-- Accounts, API keys and credentials of the keys service.

CREATE TABLE accounts (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL DEFAULT '',
    tier       text        NOT NULL CHECK (tier IN ('free', 'builder', 'pro')),
    created_at timestamptz NOT NULL
);

-- Only the SHA-256 (hex) of a key and its first 12 characters are stored.
CREATE TABLE api_keys (
    id                  uuid        PRIMARY KEY,
    account_id          uuid        NOT NULL REFERENCES accounts (id),
    key_hash            text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    display             text        NOT NULL CHECK (char_length(display) <= 12),
    env                 text        NOT NULL CHECK (env IN ('live', 'test')),
    allowed_operations  text[]      NOT NULL DEFAULT '{}',
    allowed_exchanges   text[]      NOT NULL DEFAULT '{}',
    allowed_credentials uuid[]      NOT NULL DEFAULT '{}',
    expires_at          timestamptz,
    revoked_at          timestamptz,
    created_at          timestamptz NOT NULL
);

CREATE INDEX api_keys_account_id_idx ON api_keys (account_id, created_at);

-- sealed is nonce || AES-256-GCM ciphertext || tag; key_id names the master key.
CREATE TABLE credentials (
    id         uuid        PRIMARY KEY,
    account_id uuid        NOT NULL REFERENCES accounts (id),
    exchange   text        NOT NULL,
    env        text        NOT NULL CHECK (env IN ('mainnet', 'testnet')),
    label      text        NOT NULL DEFAULT '',
    sealed     bytea       NOT NULL,
    key_id     text        NOT NULL,
    deleted_at timestamptz,
    created_at timestamptz NOT NULL
);

CREATE INDEX credentials_account_id_idx ON credentials (account_id, created_at);
