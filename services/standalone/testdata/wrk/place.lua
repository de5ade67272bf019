-- Resting post-only paper placements with fresh clientOrderIds, as the
-- bench's place_c1_p50_ms measures them (CONTRIBUTING.md, Benchmarks):
--   wrk -t1 -c1 -d10s --latency -s place.lua http://127.0.0.1:8080/v1 -- API_KEY CREDENTIAL_ID
-- Set the paper account's BTC leverage to 50 first, so it holds enough
-- resting orders (the bench does).
local key, cred, prefix
local n = 0

function setup(thread)
  thread:set("id", tostring(math.random(1, 1e9)))
end

function init(args)
  key, cred = args[1], args[2]
  prefix = "wrk-" .. os.time() .. "-" .. id .. "-"
end

function request()
  n = n + 1
  local body = string.format('{"operation":"placeLimitOrder","credentialId":"%s","market":"BTC","side":"BUY",' ..
    '"size":"0.001","price":"10000","postOnly":true,"clientOrderId":"%s%d"}', cred, prefix, n)
  return wrk.format("POST", nil, {["Content-Type"] = "application/json", ["X-API-Key"] = key}, body)
end

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("placement answered " .. status .. ": " .. body .. "\n")
  end
end
