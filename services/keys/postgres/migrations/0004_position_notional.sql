-- The maxPositionNotional guard of an API key (DESIGN §13). NULL means no limit.
ALTER TABLE api_keys
    ADD COLUMN max_position_notional numeric CHECK (max_position_notional > 0);
