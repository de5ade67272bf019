#!/usr/bin/env bash
# The README's quickstart, top to bottom, against a running gateway
# (`make run` in another terminal). PG, KEY and CRED default to
# http://localhost:8080 and the key and credential in
# ./.perpgate/bootstrap.json; PERPGATE_ADMIN_TOKEN (for the CLI part)
# defaults to the admin token there. Needs bash, curl and jq.
set -euo pipefail
boot=.perpgate/bootstrap.json
PG=${PG:-http://localhost:8080}
KEY=${KEY:-$(jq -r .apiKey "$boot")}
CRED=${CRED:-$(jq -r .credentialId "$boot")}
export PERPGATE_ADMIN_TOKEN=${PERPGATE_ADMIN_TOKEN:-$(jq -r .adminToken "$boot")}
PERPGATE=${PERPGATE:-bin/perpgate}

# v1 sends one request; it fills in $CRED, $CID and $ORDER_ID and fails on
# an error answer.
v1() {
  local body=${1//\$CRED/$CRED}
  body=${body//\$CID/${CID:-}}
  body=${body//\$ORDER_ID/${ORDER_ID:-}}
  curl -sS "$PG/v1" -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d "$body" |
    jq -ce 'if .success then . else error("\(.code): \(.error)") end'
}

# Market data and the account.
v1 '{"operation":"getMarkPrice","credentialId":"$CRED","market":"BTC"}'
v1 '{"operation":"getBalance","credentialId":"$CRED"}'

# A resting limit order with your own clientOrderId: repeating the call
# answers the same order and places nothing.
CID=quickstart-$(date +%s)-$RANDOM
ORDER_ID=$(v1 '{"operation":"placeLimitOrder","credentialId":"$CRED","market":"BTC","side":"BUY","size":"0.01","price":"50000","clientOrderId":"$CID"}' | jq -r .orderId)
v1 '{"operation":"placeLimitOrder","credentialId":"$CRED","market":"BTC","side":"BUY","size":"0.01","price":"50000","clientOrderId":"$CID"}'
v1 '{"operation":"getOrders","credentialId":"$CRED","market":"BTC"}'
v1 '{"operation":"cancelOrder","credentialId":"$CRED","orderId":"$ORDER_ID","market":"BTC"}'

# A position, a stop-loss (stops are reduce-only unless reduceOnly is false,
# so they need a position) and a take-profit/stop-loss pair.
v1 '{"operation":"placeMarketOrder","credentialId":"$CRED","market":"BTC","side":"BUY","size":"0.01"}'
v1 '{"operation":"placeStopOrder","credentialId":"$CRED","market":"BTC","side":"SELL","size":"0.01","triggerPrice":"40000"}'
v1 '{"operation":"placeProtectionOrders","credentialId":"$CRED","market":"BTC","side":"LONG","size":"0.01","entryPrice":"60000","tpPercent":5,"slPercent":3}'
v1 '{"operation":"getPositions","credentialId":"$CRED"}'
v1 '{"operation":"cancelAllOrders","credentialId":"$CRED","market":"BTC"}'
v1 '{"operation":"closeAllPositions","credentialId":"$CRED","market":"BTC"}'
v1 '{"operation":"getFills","credentialId":"$CRED","market":"BTC","limit":5}'

# The same operations as MCP tools.
curl -sS "$PG/mcp" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_mark_price","arguments":{"credentialId":"'"$CRED"'","market":"ETH"}}}' |
  jq -ce 'if .result.isError then error(.result.content[0].text) else .result.structuredContent end'

# The admin CLI: a read-only key scoped to two operations, listed, revoked.
ACCOUNT=$(jq -r .accountId "$boot")
"$PERPGATE" account list | jq -c '[.accounts[] | {id, tier}]'
NEW_KEY_ID=$("$PERPGATE" key create --account "$ACCOUNT" --env test --operations getMarkPrice,getBalance | jq -r .id)
"$PERPGATE" key list --account "$ACCOUNT" | jq -c '[.keys[] | {id, display, revokedAt}]'
"$PERPGATE" key revoke "$NEW_KEY_ID" | jq -c '{id, revokedAt}'
echo "quickstart: every call answered"
