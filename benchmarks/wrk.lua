-- wrk script for `make bench`. Arguments after `--`: <rate> <bodies-file> <method> [keyed]
--   rate        total requests per second to pace at (per wrk thread; run with -t1), 0 = closed loop
--   bodies-file one request body per line, used in turn (POST runs), "-" = none
--   method      GET (default) or POST
--   keyed       "keyed": every request carries a new Idempotency-Key (a first-time keyed write)
-- Prints one line "BENCHJSON {...}" with counts and latency percentiles in microseconds.

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock_id, bench_timespec *tp);
]]
local timespec = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, timespec) -- CLOCK_MONOTONIC
  return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local requests = nil
local bodies = {}
local next_request = 1
local interval_ms = 0
local next_at = nil
local keyed = false
local key_prefix = nil
local key_count = 0

function init(args)
  local rate = tonumber(args[1] or "0") or 0
  local bodies_file = args[2] or "-"
  wrk.method = args[3] or "GET"
  keyed = args[4] == "keyed"
  key_prefix = string.format("bench-%d-%d", os.time(), math.floor(now_ms() * 1000) % 1000000000)
  if rate > 0 then
    interval_ms = 1000 / rate
  else
    delay = nil -- closed loop: wrk sends the next request as soon as a response arrives
  end
  if bodies_file ~= "-" then
    requests = {}
    for line in io.lines(bodies_file) do
      if #line > 0 then
        bodies[#bodies + 1] = line
        requests[#requests + 1] = wrk.format(nil, nil, nil, line)
      end
    end
  else
    requests = { wrk.format() }
  end
end

function request()
  local index = next_request
  next_request = next_request + 1
  if next_request > #requests then
    next_request = 1
  end
  if not keyed then
    return requests[index]
  end
  -- wrk.format replaces wrk.headers (the -H options) with the table it is given: copy them.
  key_count = key_count + 1
  local headers = {}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Idempotency-Key"] = key_prefix .. "-" .. key_count
  return wrk.format(nil, nil, headers, bodies[index])
end

-- Paced runs: each send claims the next slot of a fixed schedule (rate per second); a send that
-- is already late goes at once and the schedule restarts from now (no catch-up bursts).
function delay()
  local now = now_ms()
  if next_at == nil or next_at < now then
    next_at = now
  end
  local wait = next_at - now
  next_at = next_at + interval_ms
  return wait
end

function done(summary, latency, requests_stats)
  local errors = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests": %d, "duration_us": %d, "connect_errors": %d, "read_errors": %d, ' ..
    '"write_errors": %d, "status_errors": %d, "timeouts": %d, "p50_us": %d, "p90_us": %d, ' ..
    '"p99_us": %d, "max_us": %d, "mean_us": %.1f}\n',
    summary.requests, summary.duration, errors.connect, errors.read, errors.write, errors.status,
    errors.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
