-- wrk script of bench:api's block intake (bench/api.ts writes the files; wrk runs one thread per
-- connection). Thread i replays <dir>/<i>.http: raw HTTP/1.1 requests in groups of `pipelining`,
-- the groups separated by a NUL byte; the last group is only GET /health probes. wrk sends a
-- group, waits for all its answers, then asks for the next. When it asks for the probe group, every
-- block has been answered: the thread notes the time, prints "done" and stops;
-- bench/api.ts then interrupts wrk (whose main thread otherwise sleeps out -d), and done() prints
-- one JSON line: the span from the first request written to the last answer, and wrk's counts.
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *ts);
]]
local CLOCK_MONOTONIC = 1
local ts = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(args[1] .. "/" .. id .. ".http", "rb"))
  local data = f:read("*a")
  f:close()
  groups = {}
  local from = 1
  while from <= #data do
    local nul = string.find(data, "\0", from, true) or (#data + 1)
    table.insert(groups, string.sub(data, from, nul - 1))
    from = nul + 1
  end
  -- wrk calls request() once on thread 0 before the run, only to count the requests in a group:
  -- that call must not use up a group.
  counting_call = id == 0
  next_group = 1
  started_at = 0
  finished_at = 0
end

function request()
  if counting_call then
    counting_call = false
    return groups[1]
  end
  if next_group == #groups then
    if finished_at == 0 then
      finished_at = now_ms()
      io.stdout:write("done\n")
      io.stdout:flush()
      wrk.thread:stop()
    end
    -- wrk may still send this group before the thread stops: only probes.
    return groups[#groups]
  end
  if started_at == 0 then started_at = now_ms() end
  next_group = next_group + 1
  return groups[next_group - 1]
end

function done(summary)
  local first, last = math.huge, 0
  for _, t in ipairs(threads) do
    first = math.min(first, t:get("started_at"))
    last = math.max(last, t:get("finished_at"))
  end
  local e = summary.errors
  io.stdout:write(string.format(
    '{"elapsedMs":%.3f,"requests":%d,"non2xx":%d,"errors":%d}\n',
    last - first, summary.requests, e.status, e.connect + e.read + e.write + e.timeout))
end
