"""The shared throttle's Lua scripts (:mod:`._redis`): a host's slot in Redis, each step one
atomic script. Every script takes an optional time (ms) that it uses instead of ``TIME``."""

_F = "string.format('%.3f', {})"


def _now(arg: int) -> str:
    """Lua: ``now`` in ms, from ``ARGV[arg]`` when given, else Redis's clock."""
    return (
        f"local now = tonumber(ARGV[{arg}])\n"
        "if not now then local t = redis.call('TIME') now = t[1] * 1000 + t[2] / 1000 end"
    )


# What the slot sees of the shared state: {limit, extra ms, backoff ms left, reason}.
_VIEW = "limit, tostring(extra), tostring(math.max(untl - now, 0)), reason or ''"

# KEYS: host, tokens, waiting. ARGV: max limit, interval ms before jitter, jitter, token ms,
# now ms ('': Redis's clock), then a token and a random number per request, in their order of
# arrival. Each token tries to start in turn, as if each sent its own call: returns {view...,
# then per token its wait ms (0: started, -1: full)}. An entry of ``waiting`` older than a
# token's lifetime is a dead worker's and is dropped.
ACQUIRE = f"""
{_now(5)}
local h = redis.call('HMGET', KEYS[1], 'limit', 'next', 'until', 'extra', 'reason')
local limit = tonumber(h[1]) or tonumber(ARGV[1])
local nxt = tonumber(h[2]) or 0
local untl = tonumber(h[3]) or 0
local extra = tonumber(h[4]) or 0
local reason = h[5]
local busy = redis.call('ZCARD', KEYS[2])
local queued = redis.call('ZCARD', KEYS[3])
-- Expired tokens and waiters (a dead worker's) are dropped when they could be in the way.
if busy + queued + (#ARGV - 5) / 2 > limit then
  busy = busy - redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
end
if queued > 0 then
  queued = queued - redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[4]))
end
local out = {{{_VIEW}}}
local started = {{}}
local moved = false
local deadline = {_F.format("now + tonumber(ARGV[4])")}
for i = 6, #ARGV, 2 do
  local token = ARGV[i]
  local ahead = 0
  if queued > 0 then ahead = redis.call('ZRANK', KEYS[3], token) or queued end
  local wait = 0
  if ahead >= limit - busy then
    queued = queued + redis.call('ZADD', KEYS[3], 'NX', {_F.format("now")}, token)
    wait = -1
  elseif math.max(nxt, untl) > now then
    wait = math.max(nxt, untl) - now
  else
    local interval = tonumber(ARGV[2]) + extra
    if interval > 0 then
      interval = interval * (1 + tonumber(ARGV[3]) * tonumber(ARGV[i + 1]))
      nxt = tonumber({_F.format("now + interval")})
      moved = true
    end
    started[#started + 1] = deadline
    started[#started + 1] = token
    if queued > 0 then queued = queued - redis.call('ZREM', KEYS[3], token) end
    busy = busy + 1
  end
  out[#out + 1] = tostring(wait)
end
if moved then redis.call('HSET', KEYS[1], 'next', {_F.format("nxt")}) end
if #started > 0 then redis.call('ZADD', KEYS[2], unpack(started)) end
return out
"""
# KEYS: host, tokens. ARGV: max limit, adaptive (1/0), backoff s, max backoff s, then per
# request ended: token, status (-1: none), latency s, Retry-After s (-1: none), now ms ('':
# Redis's clock). Adaptive.learn, on the shared state, for each answer in turn (as if each
# sent its own call). Returns the view, as ACQUIRE does.
RELEASE = f"""
local maxl, adaptive = tonumber(ARGV[1]), ARGV[2] == '1'
local backoff, cap = tonumber(ARGV[3]) * 1000, tonumber(ARGV[4]) * 1000
local h = redis.call('HMGET', KEYS[1], 'limit', 'until', 'extra', 'penalty', 'streak',
  'lat', 'best', 'reason')
local limit = tonumber(h[1]) or maxl
local untl = tonumber(h[2]) or 0
local extra = tonumber(h[3]) or 0
local penalty = tonumber(h[4]) or 0
local streak = tonumber(h[5]) or 0
local lat, best = tonumber(h[6]), tonumber(h[7])
local reason = h[8]
local function fmt(ms)
  if ms >= 10000 then return string.format('%.0f s', ms / 1000) end
  return string.format('%.1f s', ms / 1000)
end
local function shrink()
  streak = 0
  if limit > 1 then limit = math.max(1, math.floor(limit / 2))
  else extra = math.min(cap, math.max(250, extra * 2)) end
end
local clock = nil
local now
local ended = {{}}
for i = 5, #ARGV, 5 do
  now = tonumber(ARGV[i + 4])
  if not now then
    if not clock then local t = redis.call('TIME') clock = t[1] * 1000 + t[2] / 1000 end
    now = clock
  end
  ended[#ended + 1] = ARGV[i]
  local status, latency, ra = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  local function wait_until(u, why)
    if u > untl then untl = u reason = why end
  end
  if status == 429 or status == 503 then
    local episode = now >= untl
    local wait = nil
    if ra >= 0 then
      wait = math.min(ra * 1000, cap)
    elseif episode then
      penalty = math.min(cap, math.max(backoff, penalty * 2))
      wait = penalty
    end
    if wait then
      wait_until(now + wait, 'backing off after ' .. status .. ' for ' .. fmt(wait))
      if adaptive and episode then shrink() end
    end
  elseif ra >= 0 and status >= 400 then
    wait_until(now + ra * 1000, 'Retry-After after ' .. status)
  elseif status >= 0 and status < 500 and adaptive then
    if lat then lat = 0.8 * lat + 0.2 * latency else lat = latency end
    if best then best = math.min(best, lat) else best = lat end
    if lat > 3 * best + 0.05 then
      shrink()
      best = lat
    else
      streak = streak + 1
      if streak >= 5 then
        streak = 0
        penalty = penalty / 2
        if extra > 0 then
          if extra <= 250 then extra = 0 else extra = extra / 2 end
        elseif limit < maxl then
          limit = limit + 1
        end
      end
    end
  end
end
redis.call('ZREM', KEYS[2], unpack(ended))
redis.call('HSET', KEYS[1], 'limit', limit, 'until', {_F.format("untl")},
  'extra', {_F.format("extra")}, 'penalty', {_F.format("penalty")}, 'streak', streak,
  'reason', reason or '', 'lat', lat or '', 'best', best or '')
return {{{_VIEW}}}
"""
# KEYS: tokens. ARGV: token ms, now ms ('': Redis's clock), tokens held.
RENEW = f"""
{_now(2)}
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', {_F.format("now + tonumber(ARGV[1])")}, ARGV[i])
end
return 1
"""
