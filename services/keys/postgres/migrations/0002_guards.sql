-- Trading guards of an API key (DESIGN §12). NULL caps and 0 leverage mean no limit.
ALTER TABLE api_keys
    ADD COLUMN read_only          boolean NOT NULL DEFAULT false,
    ADD COLUMN allowed_markets    text[]  NOT NULL DEFAULT '{}',
    ADD COLUMN max_order_notional numeric CHECK (max_order_notional > 0),
    ADD COLUMN max_daily_notional numeric CHECK (max_daily_notional > 0),
    ADD COLUMN max_leverage       integer NOT NULL DEFAULT 0 CHECK (max_leverage >= 0);
