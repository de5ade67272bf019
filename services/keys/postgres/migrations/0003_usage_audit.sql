-- Request counts per key, UTC day and operation (GET /admin/v1/keys/{id}/usage).
CREATE TABLE key_usage (
    key_id    uuid   NOT NULL REFERENCES api_keys (id),
    day       date   NOT NULL,
    operation text   NOT NULL,
    ok        bigint NOT NULL DEFAULT 0,
    failed    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day, operation)
);

-- Trading calls, allowed or refused (GET /admin/v1/accounts/{id}/audit).
-- Never a secret or a full key: key_display is the key's first characters.
CREATE TABLE audit_log (
    request_id    text             PRIMARY KEY,
    account_id    uuid             NOT NULL,
    at            timestamptz      NOT NULL,
    key_id        text             NOT NULL,
    key_display   text             NOT NULL,
    credential_id text             NOT NULL DEFAULT '',
    exchange      text             NOT NULL DEFAULT '',
    operation     text             NOT NULL,
    params        jsonb,
    code          text             NOT NULL,
    message       text             NOT NULL DEFAULT '',
    order_ids     text[]           NOT NULL DEFAULT '{}',
    duration_ms   double precision NOT NULL DEFAULT 0,
    via           text             NOT NULL DEFAULT ''
);

CREATE INDEX audit_log_account_idx ON audit_log (account_id, at, request_id);
