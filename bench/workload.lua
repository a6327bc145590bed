-- The workloads of bench/load.sh, for wrk. Usage:
--   wrk -s bench/workload.lua URL -- WORKLOAD TOKEN USERS TAG
-- WORKLOAD is get (GET one user), list (GET /api/users), post (POST a new user), mix (9 GETs of
-- one user, then a PUT of one) or put (PUTs only, for bench/journal.sh). USERS is how many seed
-- users there are (ids 1..USERS, user N being "Seed User N", seedN@bench.test). TAG makes this
-- run's new e-mails unlike any earlier run's. It ends by printing one RESULT line for load.sh and
-- journal.sh to read.

local threads = 0

-- setup runs once per thread, in wrk's main Lua state: give each thread its own number.
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

local workload, users, tag
local count = 0
local read_headers, json_headers

function init(args)
  workload, users, tag = args[1], tonumber(args[3]), args[4]
  read_headers = { ["Authorization"] = "Bearer " .. args[2] }
  json_headers = { ["Authorization"] = "Bearer " .. args[2], ["Content-Type"] = "application/json" }
  math.randomseed(thread_number * 7919 + os.time())
end

local function user_body(name, email)
  return '{"name":"' .. name .. '","email":"' .. email .. '"}'
end

function request()
  count = count + 1
  if workload == "list" then
    return wrk.format("GET", "/api/users", read_headers)
  elseif workload == "post" then
    -- Unique in this run (thread and counter) and across runs (tag): no 409.
    local n = tag .. "-" .. thread_number .. "-" .. count
    return wrk.format("POST", "/api/users", json_headers, user_body("Load User " .. n, "load" .. n .. "@bench.test"))
  end
  local id = math.random(users)
  if workload == "put" or (workload == "mix" and count % 10 == 0) then
    -- A whole replacement that keeps the user's own e-mail, so it never conflicts.
    return wrk.format("PUT", "/api/users/" .. id, json_headers, user_body("Seed User " .. id, "seed" .. id .. "@bench.test"))
  end
  return wrk.format("GET", "/api/users/" .. id, read_headers)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d bad_status=%d socket_errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
