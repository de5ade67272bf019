-- getMarkPrice reads, the bench's c1_p50_ms (CONTRIBUTING.md, Benchmarks):
--   wrk -t1 -c1 -d10s --latency -s read.lua http://127.0.0.1:8080/v1 -- API_KEY CREDENTIAL_ID
local body

function init(args)
  body = string.format('{"operation":"getMarkPrice","credentialId":"%s","market":"BTC-USD-PERP"}', args[2])
  wrk.method, wrk.body = "POST", body
  wrk.headers["Content-Type"], wrk.headers["X-API-Key"] = "application/json", args[1]
end
